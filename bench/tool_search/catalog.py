"""Sixty tools of a dozen MCP-like servers, and requests that each need one of them: the
catalog of the tool-search measurements (bench/tool_search/run.py) and tests.

Written as an agent with many MCP servers sees its tools: prefixed names, one-line
descriptions, a few typed parameters. The requests were written before any run, each
naming a task one tool does; none of tooluse's rules reads them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FRESH_REQUESTS", "REQUESTS", "TOOLS", "tool"]


def tool(name: str, description: str, /, **params: Any) -> dict[str, Any]:
    """A Messages tool definition; each keyword is a parameter: a type name, or a
    (type, description) pair; all are required except those whose description starts
    with 'optional'."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for key, spec in params.items():
        kind, text = spec if isinstance(spec, tuple) else (spec, "")
        prop: dict[str, Any] = {"type": kind}
        if kind == "array":
            prop["items"] = {"type": "string"}
        if text:
            prop["description"] = text
        properties[key] = prop
        if not text.startswith("optional"):
            required.append(key)
    return {"name": name, "description": description,
            "input_schema": {"type": "object", "properties": properties, "required": required}}


TOOLS: list[dict[str, Any]] = [
    # GitHub
    tool("github_create_issue", "Open a new issue in a GitHub repository.",
         repo=("string", "owner/name"), title="string", body=("string", "optional text")),
    tool("github_list_pull_requests", "List the pull requests of a GitHub repository.",
         repo=("string", "owner/name"), state=("string", "optional: open, closed or all")),
    tool("github_get_file", "Read a file from a GitHub repository.",
         repo=("string", "owner/name"), path="string", ref=("string", "optional branch")),
    tool("github_search_code", "Search code across GitHub repositories.",
         query="string", repo=("string", "optional owner/name")),
    tool("github_merge_pull_request", "Merge a pull request.",
         repo=("string", "owner/name"), number="integer"),
    tool("github_add_comment", "Comment on a GitHub issue or pull request.",
         repo=("string", "owner/name"), issue_number="integer", body="string"),
    tool("github_list_commits", "List the recent commits of a branch.",
         repo=("string", "owner/name"), branch=("string", "optional")),
    tool("github_create_branch", "Create a branch in a GitHub repository.",
         repo=("string", "owner/name"), name="string"),
    # Slack
    tool("slack_send_message", "Post a message to a Slack channel.",
         channel=("string", "channel name, e.g. #general"), text="string"),
    tool("slack_list_channels", "List the Slack channels of the workspace."),
    tool("slack_get_channel_history", "Read the latest messages of a Slack channel.",
         channel="string", limit=("integer", "optional number of messages")),
    tool("slack_add_reaction", "Add an emoji reaction to a Slack message.",
         channel="string", timestamp="string", emoji="string"),
    tool("slack_set_status", "Set your Slack status text and emoji.",
         text="string", emoji=("string", "optional")),
    tool("slack_find_user", "Find a Slack user by name.", name="string"),
    # Calendar
    tool("calendar_create_event", "Create an event in the calendar.",
         title="string", start=("string", "ISO date and time"),
         end=("string", "optional ISO date and time"), attendees=("array", "optional emails")),
    tool("calendar_list_events", "List the calendar events of a day.",
         date=("string", "YYYY-MM-DD")),
    tool("calendar_delete_event", "Delete a calendar event.", event_id="string"),
    tool("calendar_find_free_slot", "Find a free time slot in the calendar.",
         duration_minutes="integer", date=("string", "optional YYYY-MM-DD")),
    tool("calendar_update_event", "Move a calendar event to another time.",
         event_id="string", start="string"),
    # Email
    tool("email_send", "Send an email.", to="string", subject="string", body="string"),
    tool("email_search", "Search the mailbox.", query="string",
         folder=("string", "optional, default inbox")),
    tool("email_read", "Read one email by its id.", message_id="string"),
    tool("email_archive", "Archive an email.", message_id="string"),
    tool("email_create_draft", "Save an email as a draft without sending it.",
         to="string", subject="string", body="string"),
    # Weather
    tool("get_current_weather", "Current weather conditions in a city.",
         city="string", units=("string", "optional: celsius or fahrenheit")),
    tool("get_weather_forecast", "Weather forecast for the next days in a city.",
         city="string", days=("integer", "optional, 1 to 10")),
    tool("get_air_quality", "Air quality index of a city.", city="string"),
    # Maps
    tool("maps_get_directions", "Driving, walking or transit directions between two places.",
         origin="string", destination="string",
         mode=("string", "optional: driving, walking or transit")),
    tool("maps_search_places", "Find places such as restaurants or shops near a location.",
         query="string", near="string"),
    tool("maps_geocode", "Turn an address into latitude and longitude.", address="string"),
    tool("maps_distance", "Distance and travel time between two places.",
         origin="string", destination="string"),
    # Files
    tool("fs_read_file", "Read a text file.", path="string"),
    tool("fs_write_file", "Write text to a file.", path="string", content="string"),
    tool("fs_list_directory", "List the files and folders in a directory.", path="string"),
    tool("fs_move_file", "Move or rename a file.", source="string", destination="string"),
    tool("fs_search_files", "Find files whose names match a pattern.",
         pattern="string", path=("string", "optional folder")),
    # Database
    tool("db_query", "Run a read-only SQL query on the database.", sql="string"),
    tool("db_list_tables", "List the tables of the database."),
    tool("db_describe_table", "Show the columns of a database table.", table="string"),
    # Jira
    tool("jira_create_ticket", "Create a Jira ticket.", project=("string", "project key"),
         summary="string", description=("string", "optional")),
    tool("jira_transition_issue", "Move a Jira issue to another status.",
         key="string", status="string"),
    tool("jira_assign_issue", "Assign a Jira issue to someone.", key="string", assignee="string"),
    tool("jira_search_issues", "Search Jira issues with JQL.", jql="string"),
    # Sentry
    tool("sentry_list_errors", "List the recent errors of a Sentry project.",
         project="string"),
    tool("sentry_resolve_issue", "Mark a Sentry issue as resolved.", issue_id="string"),
    # Finance
    tool("get_stock_price", "Latest price of a stock.", symbol=("string", "ticker, e.g. MSFT")),
    tool("convert_currency", "Convert an amount of money between currencies.",
         amount="number", from_currency=("string", "ISO code"),
         to_currency=("string", "ISO code")),
    tool("get_exchange_rate", "Exchange rate between two currencies.",
         base="string", quote="string"),
    tool("get_crypto_price", "Price of a cryptocurrency.", coin="string"),
    # Language
    tool("translate_text", "Translate text into another language.",
         text="string", target_language="string"),
    tool("detect_language", "Detect the language of a text.", text="string"),
    tool("summarize_text", "Summarize a long text.", text="string",
         max_words=("integer", "optional")),
    # Notes and to-dos
    tool("notes_create", "Create a note.", title="string", body="string"),
    tool("notes_search", "Search your notes.", query="string"),
    tool("todo_add", "Add a task to the to-do list.", task="string",
         due_date=("string", "optional YYYY-MM-DD")),
    tool("todo_complete", "Mark a to-do task as done.", task_id="string"),
    # Home
    tool("set_thermostat", "Set the thermostat temperature of a room.",
         temperature="number", room=("string", "optional")),
    tool("turn_on_lights", "Turn on the lights of a room.", room="string",
         brightness=("integer", "optional percent")),
    # Misc
    tool("shorten_url", "Make a short link for a long URL.", url="string"),
    tool("get_news_headlines", "Today's news headlines on a topic.",
         topic="string", country=("string", "optional")),
]

#: (request, the tool that does it).
REQUESTS: list[tuple[str, str]] = [
    ("What's the weather like in Lisbon right now?", "get_current_weather"),
    ("Send a message to the #deployments channel on Slack saying the release is done.",
     "slack_send_message"),
    ("Convert 250 US dollars to euros.", "convert_currency"),
    ("Open a GitHub issue in acme/api titled 'Login fails on Safari'.", "github_create_issue"),
    ("Translate 'good morning' into Japanese.", "translate_text"),
    ("How do I drive from Berlin to Hamburg?", "maps_get_directions"),
    ("Set the living room thermostat to 21 degrees.", "set_thermostat"),
    ("Email alice@example.com with the subject 'Lunch' and ask if she is free on Friday.",
     "email_send"),
    ("What is Apple's stock price?", "get_stock_price"),
    ("List the files in the /var/log directory.", "fs_list_directory"),
    ("Create a Jira ticket in project OPS: the backup job failed last night.",
     "jira_create_ticket"),
    ("Add 'buy milk' to my to-do list for tomorrow.", "todo_add"),
]

#: Ten more requests, written after the last change to the search and its presentation
#: (the twelve above are what those were tuned on): a gain counts on these.
FRESH_REQUESTS: list[tuple[str, str]] = [
    ("Find a coffee shop near Union Square.", "maps_search_places"),
    ("Set my Slack status to 'in a meeting'.", "slack_set_status"),
    ("How much is one Bitcoin worth right now?", "get_crypto_price"),
    ("Make a short link for https://example.com/a/very/long/path.", "shorten_url"),
    ("What language is 'Hvordan har du det' written in?", "detect_language"),
    ("Rename report.txt to report-2026.txt.", "fs_move_file"),
    ("Show me today's headlines about electric cars.", "get_news_headlines"),
    ("Is the air in Delhi safe to breathe today?", "get_air_quality"),
    ("Which tables does the database have?", "db_list_tables"),
    ("When am I free for an hour next Tuesday?", "calendar_find_free_slot"),
]

assert len(TOOLS) == 60 and len({t["name"] for t in TOOLS}) == 60
assert {name for _, name in REQUESTS + FRESH_REQUESTS} <= {t["name"] for t in TOOLS}
