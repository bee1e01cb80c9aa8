"""A city written with its state where the parameter asks for "City, State".

The tool-use world's most copied example is a weather tool whose location is "The city
and state, e.g. San Francisco, CA"; a user asks for "the weather in Boston", and a small
model writes ``Boston``. :func:`with_region` completes such a value from a table of the
largest US cities (:data:`US_CITIES`): ``Boston, MA`` — or ``Boston, Massachusetts``
where the description's own example spells the state out. Only a city of the table,
written alone, in a parameter whose description asks for the state (an example
"Palo Alto, CA", or the words "city and state", "City, State", "state abbreviation"), is
completed; anything else is left as written.

Outside the US, a parameter that asks in so many words for "City, Country" ("'City,
Country' if State for the city doesn't exist") has a city of :data:`WORLD_CITIES` (the
capitals and largest cities) completed with its country: ``Moscow, Russia``.

Before the tables, the question itself: where it writes the model's value as part of a place
with its region ("Bangkok, Thailand", "Divinópolis, MG") and the parameter asks for a city
with its state or country, the place is written whole, as the question writes it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .schemas import properties

__all__ = ["US_CITIES", "WORLD_CITIES", "asks_for_state", "known_place", "with_region"]

#: State names by postal code (the 50 states and DC).
US_STATES = {
    "AL": "Alabama", "AK": "Alaska", "AZ": "Arizona", "AR": "Arkansas", "CA": "California",
    "CO": "Colorado", "CT": "Connecticut", "DE": "Delaware", "DC": "District of Columbia",
    "FL": "Florida", "GA": "Georgia", "HI": "Hawaii", "ID": "Idaho", "IL": "Illinois",
    "IN": "Indiana", "IA": "Iowa", "KS": "Kansas", "KY": "Kentucky", "LA": "Louisiana",
    "ME": "Maine", "MD": "Maryland", "MA": "Massachusetts", "MI": "Michigan",
    "MN": "Minnesota", "MS": "Mississippi", "MO": "Missouri", "MT": "Montana",
    "NE": "Nebraska", "NV": "Nevada", "NH": "New Hampshire", "NJ": "New Jersey",
    "NM": "New Mexico", "NY": "New York", "NC": "North Carolina", "ND": "North Dakota",
    "OH": "Ohio", "OK": "Oklahoma", "OR": "Oregon", "PA": "Pennsylvania",
    "RI": "Rhode Island", "SC": "South Carolina", "SD": "South Dakota", "TN": "Tennessee",
    "TX": "Texas", "UT": "Utah", "VT": "Vermont", "VA": "Virginia", "WA": "Washington",
    "WV": "West Virginia", "WI": "Wisconsin", "WY": "Wyoming",
}

#: The largest US cities (2020 census, no two of a name among them) and their states.
US_CITIES = {
    "New York": "NY", "New York City": "NY", "Los Angeles": "CA", "Chicago": "IL",
    "Houston": "TX", "Phoenix": "AZ", "Philadelphia": "PA", "San Antonio": "TX",
    "San Diego": "CA", "Dallas": "TX", "San Jose": "CA", "Austin": "TX",
    "Jacksonville": "FL", "Fort Worth": "TX", "Columbus": "OH", "Indianapolis": "IN",
    "Charlotte": "NC", "San Francisco": "CA", "Seattle": "WA", "Denver": "CO",
    "Washington": "DC", "Nashville": "TN", "Oklahoma City": "OK", "El Paso": "TX",
    "Boston": "MA", "Portland": "OR", "Las Vegas": "NV", "Detroit": "MI", "Memphis": "TN",
    "Louisville": "KY", "Baltimore": "MD", "Milwaukee": "WI", "Albuquerque": "NM",
    "Tucson": "AZ", "Fresno": "CA", "Sacramento": "CA", "Mesa": "AZ", "Atlanta": "GA",
    "Kansas City": "MO", "Colorado Springs": "CO", "Omaha": "NE", "Raleigh": "NC",
    "Miami": "FL", "Long Beach": "CA", "Virginia Beach": "VA", "Oakland": "CA",
    "Minneapolis": "MN", "Tulsa": "OK", "Tampa": "FL", "Arlington": "TX",
    "New Orleans": "LA", "Wichita": "KS", "Cleveland": "OH", "Bakersfield": "CA",
    "Aurora": "CO", "Anaheim": "CA", "Honolulu": "HI", "Santa Ana": "CA",
    "Riverside": "CA", "Corpus Christi": "TX", "Lexington": "KY", "Pittsburgh": "PA",
    "Anchorage": "AK", "Stockton": "CA", "Cincinnati": "OH", "Saint Paul": "MN",
    "St. Louis": "MO", "Orlando": "FL", "Salt Lake City": "UT", "Berkeley": "CA",
    "Palo Alto": "CA",
}

#: Capitals and the largest cities outside the US, with their countries (as commonly
#: written in English), for parameters that ask for "City, Country".
WORLD_CITIES = {
    "Tokyo": "Japan", "Osaka": "Japan", "Kyoto": "Japan", "Yokohama": "Japan",
    "Delhi": "India", "New Delhi": "India", "Mumbai": "India", "Bangalore": "India",
    "Bengaluru": "India", "Hyderabad": "India", "Chennai": "India", "Kolkata": "India",
    "Pune": "India", "Ahmedabad": "India", "Shanghai": "China", "Beijing": "China",
    "Shenzhen": "China", "Guangzhou": "China", "Chengdu": "China", "Wuhan": "China",
    "Hong Kong": "China", "Taipei": "Taiwan", "Seoul": "South Korea", "Busan": "South Korea",
    "Bangkok": "Thailand", "Hanoi": "Vietnam", "Ho Chi Minh City": "Vietnam",
    "Jakarta": "Indonesia", "Manila": "Philippines", "Kuala Lumpur": "Malaysia",
    "Singapore": "Singapore", "Dhaka": "Bangladesh", "Karachi": "Pakistan",
    "Lahore": "Pakistan", "Islamabad": "Pakistan", "Kabul": "Afghanistan",
    "Tehran": "Iran", "Baghdad": "Iraq", "Riyadh": "Saudi Arabia", "Jeddah": "Saudi Arabia",
    "Dubai": "UAE", "Abu Dhabi": "UAE", "Doha": "Qatar", "Tel Aviv": "Israel",
    "Jerusalem": "Israel", "Amman": "Jordan", "Beirut": "Lebanon", "Damascus": "Syria",
    "Istanbul": "Turkey", "Ankara": "Turkey", "Cairo": "Egypt", "Alexandria": "Egypt",
    "Lagos": "Nigeria", "Abuja": "Nigeria", "Nairobi": "Kenya", "Addis Ababa": "Ethiopia",
    "Johannesburg": "South Africa", "Cape Town": "South Africa", "Kinshasa": "DR Congo",
    "Casablanca": "Morocco", "Rabat": "Morocco", "Algiers": "Algeria", "Tunis": "Tunisia",
    "Accra": "Ghana", "Dakar": "Senegal", "Moscow": "Russia",
    "Saint Petersburg": "Russia", "St. Petersburg": "Russia", "Kyiv": "Ukraine",
    "Kiev": "Ukraine", "Warsaw": "Poland", "Krakow": "Poland", "Prague": "Czech Republic",
    "Vienna": "Austria", "Budapest": "Hungary", "Bucharest": "Romania", "Sofia": "Bulgaria",
    "Athens": "Greece", "Belgrade": "Serbia", "Zagreb": "Croatia", "Berlin": "Germany",
    "Munich": "Germany", "Hamburg": "Germany", "Frankfurt": "Germany", "Cologne": "Germany",
    "Paris": "France", "Marseille": "France", "Lyon": "France", "Nice": "France",
    "London": "UK", "Manchester": "UK", "Birmingham": "UK", "Edinburgh": "UK",
    "Glasgow": "UK", "Liverpool": "UK", "Dublin": "Ireland", "Madrid": "Spain",
    "Barcelona": "Spain", "Seville": "Spain", "Valencia": "Spain", "Lisbon": "Portugal",
    "Porto": "Portugal", "Rome": "Italy", "Milan": "Italy", "Naples": "Italy",
    "Venice": "Italy", "Florence": "Italy", "Turin": "Italy", "Amsterdam": "Netherlands",
    "Rotterdam": "Netherlands", "Brussels": "Belgium", "Zurich": "Switzerland",
    "Geneva": "Switzerland", "Bern": "Switzerland", "Copenhagen": "Denmark",
    "Stockholm": "Sweden", "Oslo": "Norway", "Helsinki": "Finland", "Reykjavik": "Iceland",
    "Toronto": "Canada", "Montreal": "Canada", "Vancouver": "Canada", "Ottawa": "Canada",
    "Calgary": "Canada", "Mexico City": "Mexico", "Guadalajara": "Mexico",
    "Monterrey": "Mexico", "Havana": "Cuba", "Bogota": "Colombia", "Bogotá": "Colombia",
    "Lima": "Peru", "Santiago": "Chile", "Buenos Aires": "Argentina", "Caracas": "Venezuela",
    "Quito": "Ecuador", "Montevideo": "Uruguay", "São Paulo": "Brazil",
    "Sao Paulo": "Brazil", "Rio de Janeiro": "Brazil", "Brasília": "Brazil",
    "Brasilia": "Brazil", "Sydney": "Australia", "Melbourne": "Australia",
    "Brisbane": "Australia", "Perth": "Australia", "Canberra": "Australia",
    "Auckland": "New Zealand", "Wellington": "New Zealand",
}

_EXAMPLE = re.compile(r"\b([A-Z][a-z]+(?: [A-Z][a-z]+)*), "
                      r"([A-Z]{2}|[A-Z][a-z]+(?: [A-Z][a-z]+)?)\b")
_WORDS = re.compile(r"\b(?:city and state|city, state|state abbreviation)\b", re.IGNORECASE)
_COUNTRY = re.compile(r"\bcity(?:,| and) country\b", re.IGNORECASE)
#: A place written with its region in a question: "Bangkok, Thailand", "Naples, Florida",
#: "Divinópolis, MG" (one to three capitalised words on each side of the comma).
_CAPITALISED = r"[^\W\d_][^\W_]*\.?"
_PLACE = re.compile(rf"((?:{_CAPITALISED} ){{0,2}}{_CAPITALISED}), "
                    rf"((?:{_CAPITALISED} ){{0,2}}{_CAPITALISED})(?!\w)(?!,\s*[A-Z])")


_BY_NAME = {name.lower(): state for name, state in US_CITIES.items()}
_WORLD_BY_NAME = {name.lower(): country for name, country in WORLD_CITIES.items()}


_KNOWN_PLACES = frozenset(
    name.lower() for name in [*US_STATES.values(), *US_CITIES, *WORLD_CITIES,
                              *WORLD_CITIES.values(), "USA", "United States", "UK"])


def known_place(text: str) -> bool:
    """Is ``text`` (up to case) one of the tables' places: a US state, a city of
    :data:`US_CITIES` or :data:`WORLD_CITIES`, the country of one, or "USA", "United
    States" or "UK"?"""
    return text.strip().lower() in _KNOWN_PLACES


def asks_for_state(schema: Mapping[str, Any]) -> str | None:
    """``"code"`` or ``"name"`` when a string parameter's description asks for a city with
    its state (an example "San Francisco, CA", or "Denver, Colorado": the state spelled
    out), None when it does not."""
    if schema.get("type") not in ("string", None):
        return None
    description = str(schema.get("description", ""))
    for m in _EXAMPLE.finditer(description):
        region = m.group(2)
        if region in US_STATES:
            return "code"
        if region in US_STATES.values():
            return "name"
    return "code" if _WORDS.search(description) else None


def _place_in(question: str, value: str) -> str | None:
    """The place "City, Region" of ``question`` whose city or region is ``value``: the
    capitalised words on each side of a comma, the value being one side."""
    wanted = value.strip().lower()
    for m in _PLACE.finditer(question):
        city = _capitalised_tail(m.group(1))
        region = _capitalised_head(m.group(2))
        if city and region and wanted in (city.lower(), region.lower()):
            return f"{city}, {region}"
    return None


def _capitalised_tail(words: str) -> str:
    """The last capitalised words of ``words`` ("in Bangkok" -> "Bangkok")."""
    kept: list[str] = []
    for word in reversed(words.split(" ")):
        if not word[:1].isupper():
            break
        kept.insert(0, word)
    return " ".join(kept)


def _capitalised_head(words: str) -> str:
    """The first capitalised words of ``words`` ("Thailand. I" -> "Thailand")."""
    kept: list[str] = []
    for word in words.split(" "):
        if not word[:1].isupper():
            break
        kept.append(word.rstrip("."))
        if word.endswith("."):
            break
    return " ".join(kept)


def with_region(arguments: Mapping[str, Any],
                schema: Mapping[str, Any] | None, question: str = "") -> dict[str, Any]:
    """``arguments`` with each city of :data:`US_CITIES` written alone, in a parameter that
    asks for the state (:func:`asks_for_state`), completed with its state; and each city of
    :data:`WORLD_CITIES` written alone, in a parameter that asks in so many words for
    "City, Country", completed with its country."""
    props: Mapping[str, Any] = properties(schema) or {}
    new = dict(arguments)
    for key, value in arguments.items():
        sub = props.get(key)
        if not isinstance(value, str) or not isinstance(sub, Mapping):
            continue
        asks_country = bool(_COUNTRY.search(str(sub.get("description"))))
        if question and (asks_for_state(sub) or asks_country):
            place = _place_in(question, value)
            if place is not None:
                new[key] = place
                continue
        state = _BY_NAME.get(value.strip().lower())
        form = asks_for_state(sub) if state else None
        if state and form:
            new[key] = f"{value.strip()}, {state if form == 'code' else US_STATES[state]}"
            continue
        country = _WORLD_BY_NAME.get(value.strip().lower())
        if country and asks_country:
            new[key] = f"{value.strip()}, {country}"
    return new
