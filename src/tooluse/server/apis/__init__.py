"""The gateway's wire APIs: one module per API (its routes and its error shape) and the
endpoint they share."""
