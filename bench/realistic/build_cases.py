"""Write ``cases.jsonl``: the realistic tool-call set.

    python bench/realistic/build_cases.py            # rewrites bench/realistic/cases.jsonl
    python bench/realistic/build_cases.py --check    # exit 1 if the file is out of date

The cases were written from scratch for this set, as requests a user of a phone or home
assistant would make; none is drawn from BFCL or any other benchmark. The tools are defined
once here and shared by the cases, which is why the set is built by a script rather than
written as JSON by hand: ``cases.jsonl`` is the artifact the runner reads, this file is the
source to edit.

Every case offers several tools (one or two of them right), gives the assistant a system
prompt holding today's date (Tuesday 10 June 2025, 14:00) so that relative dates have one
right answer, and lists the calls a careful human would expect: for each parameter the
acceptable values, ``None`` where leaving the parameter out is fine as well. A parameter
not listed must not be present.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CASES_PATH = HERE / "cases.jsonl"

SYSTEM = (
    "You are a helpful assistant on the user's phone, connected to their smart home, "
    "calendar, messages and bank. Today is Tuesday, 10 June 2025, and the local time is 14:00."
)

HHMM = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"
DATE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
CURRENCY = r"^[A-Z]{3}$"
WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
LANGS = ["en", "de", "fr", "es", "it", "pt", "nl", "ja", "zh"]


def _tool(name: str, description: str, properties: dict[str, Any],
          required: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "input_schema": {"type": "object", "properties": properties, "required": required},
    }


def _s(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


TOOLS: dict[str, dict[str, Any]] = {t["name"]: t for t in [
    _tool("set_timer",
          "Start a countdown timer on the user's phone. It rings when the time is up. Use it "
          "for durations ('in 10 minutes'), not for a time of day (use set_alarm for that).",
          {"minutes": {"type": "number", "exclusiveMinimum": 0,
                       "description": "Length of the timer in minutes; may be fractional, "
                                      "e.g. 0.5 for 30 seconds or 90 for an hour and a half."},
           "label": _s("Optional short name shown when the timer rings, e.g. 'pasta'.")},
          ["minutes"]),
    _tool("cancel_timer",
          "Cancel a running timer. Only use it when the user asks to stop or cancel a timer.",
          {"label": _s("The label of the timer to cancel; omit to cancel the most recent one.")},
          []),
    _tool("set_alarm",
          "Set an alarm that rings at a time of day, once or on repeating weekdays.",
          {"time": _s("Time of day, 24-hour HH:MM, e.g. 06:45 or 19:30.", pattern=HHMM),
           "days": {"type": "array", "items": {"type": "string", "enum": WEEKDAYS},
                    "description": "Weekdays on which the alarm repeats; omit for a one-off "
                                   "alarm."},
           "label": _s("Optional name of the alarm.")},
          ["time"]),
    _tool("create_reminder",
          "Create a reminder that notifies the user at a given local date and time.",
          {"text": _s("What to remind the user of, e.g. 'call the bank'."),
           "when": _s("Local date and time, ISO 8601 YYYY-MM-DDTHH:MM, e.g. 2025-06-11T08:00.")},
          ["text", "when"]),
    _tool("set_thermostat",
          "Set the target temperature of the home's heating / air conditioning.",
          {"temperature": {"type": "number", "description": "Target temperature."},
           "unit": {"type": "string", "enum": ["celsius", "fahrenheit"],
                    "description": "Unit of the temperature."},
           "room": _s("Room or zone, e.g. 'bedroom' or 'upstairs'; omit for the whole home.")},
          ["temperature", "unit"]),
    _tool("set_lights",
          "Switch the lights of one room on or off, and optionally set brightness and colour.",
          {"room": _s("The room, e.g. 'kitchen', 'bedroom', 'living room'."),
           "power": {"type": "string", "enum": ["on", "off"]},
           "brightness": {"type": "integer", "minimum": 0, "maximum": 100,
                          "description": "Brightness in percent."},
           "color": _s("Colour name, e.g. 'warm white', 'blue'.")},
          ["room", "power"]),
    _tool("lock_door",
          "Lock or unlock one of the home's smart locks.",
          {"door": {"type": "string", "enum": ["front", "back", "garage"]},
           "action": {"type": "string", "enum": ["lock", "unlock"]}},
          ["door", "action"]),
    _tool("send_email",
          "Send an email from the user's account. It is sent immediately.",
          {"to": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                  "description": "Recipient email addresses."},
           "subject": _s("Subject line."),
           "body": _s("Plain-text body."),
           "cc": {"type": "array", "items": {"type": "string"},
                  "description": "Optional CC email addresses."}},
          ["to", "subject", "body"]),
    _tool("send_message",
          "Send a text message (SMS or chat) to one of the user's contacts.",
          {"recipient": _s("Contact name or phone number."),
           "text": _s("The message text.")},
          ["recipient", "text"]),
    _tool("find_contact",
          "Look up a contact in the user's address book by name; returns their email address "
          "and phone number.",
          {"name": _s("Name or part of a name.")},
          ["name"]),
    _tool("call_contact",
          "Start a phone call to one of the user's contacts.",
          {"name": _s("Contact name.")},
          ["name"]),
    _tool("create_calendar_event",
          "Add an event to the user's calendar.",
          {"title": _s("Title of the event."),
           "date": _s("Date, YYYY-MM-DD.", pattern=DATE),
           "start_time": _s("Start time, 24-hour HH:MM.", pattern=HHMM),
           "duration_minutes": {"type": "integer", "minimum": 1, "default": 60,
                                "description": "Length in minutes (default 60)."},
           "location": _s("Optional place."),
           "attendees": {"type": "array", "items": {"type": "string"},
                         "description": "Optional names or email addresses to invite."}},
          ["title", "date", "start_time"]),
    _tool("transfer_money",
          "Transfer money from one of the user's bank accounts to a payee. Money leaves the "
          "account immediately.",
          {"from_account": {"type": "string", "enum": ["checking", "savings"],
                            "description": "The user's account to pay from."},
           "to": _s("Payee name or IBAN."),
           "amount": {"type": "number", "exclusiveMinimum": 0},
           "currency": _s("ISO 4217 currency code, e.g. EUR, USD.", pattern=CURRENCY),
           "reference": _s("Optional payment reference shown to the payee.")},
          ["from_account", "to", "amount", "currency"]),
    _tool("convert_currency",
          "Convert an amount of money between currencies at today's exchange rate.",
          {"amount": {"type": "number"},
           "from_currency": _s("ISO 4217 code of the amount's currency.", pattern=CURRENCY),
           "to_currency": _s("ISO 4217 code to convert into.", pattern=CURRENCY)},
          ["amount", "from_currency", "to_currency"]),
    _tool("get_weather",
          "Get the current weather and forecast for a city.",
          {"city": _s("City name."),
           "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
           "days": {"type": "integer", "minimum": 1, "maximum": 7, "default": 1,
                    "description": "Days of forecast starting today; 1 = today only, "
                                   "2 = today and tomorrow."}},
          ["city"]),
    _tool("web_search",
          "Search the web and return the top results.",
          {"query": _s("The search query."),
           "max_results": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5}},
          ["query"]),
    _tool("translate_text",
          "Translate a text into another language.",
          {"text": _s("The text to translate."),
           "target_language": {"type": "string", "enum": LANGS,
                               "description": "ISO 639-1 code of the target language."},
           "source_language": {"type": "string", "enum": LANGS,
                               "description": "Optional ISO 639-1 code of the text's language."}},
          ["text", "target_language"]),
    _tool("move_file",
          "Move or rename a file in the user's home folder.",
          {"source": _s("Current path, relative to the home folder."),
           "destination": _s("New path (or folder), relative to the home folder.")},
          ["source", "destination"]),
    _tool("delete_file",
          "Delete a file permanently.",
          {"path": _s("Path of the file.")},
          ["path"]),
    _tool("create_folder",
          "Create a folder (and any missing parent folders).",
          {"path": _s("Path of the new folder, relative to the home folder.")},
          ["path"]),
    _tool("list_files",
          "List the files in a folder.",
          {"path": _s("Folder path."),
           "pattern": _s("Optional glob pattern, e.g. '*.pdf'.")},
          ["path"]),
    _tool("add_to_shopping_list",
          "Add items to a shopping list.",
          {"items": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                     "description": "The items, one per entry."},
           "list_name": _s("Which list; omit for the default grocery list.")},
          ["items"]),
    _tool("book_table",
          "Book a table at a restaurant.",
          {"restaurant": _s("Restaurant name."),
           "date": _s("Date, YYYY-MM-DD.", pattern=DATE),
           "time": _s("Time, 24-hour HH:MM.", pattern=HHMM),
           "party_size": {"type": "integer", "minimum": 1},
           "notes": _s("Optional requests, e.g. 'window seat'.")},
          ["restaurant", "date", "time", "party_size"]),
    _tool("book_hotel",
          "Book a hotel room.",
          {"city": _s("City."),
           "check_in": _s("Check-in date, YYYY-MM-DD.", pattern=DATE),
           "check_out": _s("Check-out date, YYYY-MM-DD.", pattern=DATE),
           "guests": {"type": "integer", "minimum": 1},
           "rooms": {"type": "integer", "minimum": 1, "default": 1}},
          ["city", "check_in", "check_out", "guests"]),
    _tool("search_flights",
          "Search for flights (does not book).",
          {"origin": _s("Departure city or IATA airport code."),
           "destination": _s("Arrival city or IATA airport code."),
           "date": _s("Departure date, YYYY-MM-DD.", pattern=DATE),
           "passengers": {"type": "integer", "minimum": 1, "default": 1},
           "cabin": {"type": "string",
                     "enum": ["economy", "premium_economy", "business", "first"],
                     "default": "economy"}},
          ["origin", "destination", "date"]),
    _tool("book_taxi",
          "Book a taxi.",
          {"pickup": _s("Pickup address or place."),
           "destination": _s("Destination address or place."),
           "time": _s("Pickup time today, 24-hour HH:MM; omit for now.", pattern=HHMM)},
          ["pickup", "destination"]),
    _tool("play_music",
          "Play music on the home speakers.",
          {"query": _s("Artist, album, song or genre."),
           "shuffle": {"type": "boolean", "default": False}},
          ["query"]),
    _tool("set_volume",
          "Set the speaker volume.",
          {"level": {"type": "integer", "minimum": 0, "maximum": 100,
                     "description": "Volume in percent."}},
          ["level"]),
    _tool("get_directions",
          "Get directions from the user's current location to a destination.",
          {"destination": _s("Place or address."),
           "mode": {"type": "string", "enum": ["driving", "walking", "cycling", "transit"],
                    "default": "driving"}},
          ["destination"]),
    _tool("create_note",
          "Save a note.",
          {"title": _s("Title of the note."),
           "content": _s("Text of the note.")},
          ["title", "content"]),
    _tool("get_stock_price",
          "Get the latest price of a stock by its ticker symbol.",
          {"symbol": _s("Ticker symbol, e.g. MSFT.")},
          ["symbol"]),
    _tool("convert_units",
          "Convert a measurement from one unit to another.",
          {"value": {"type": "number"},
           "from_unit": _s("Unit of the value, e.g. 'miles'."),
           "to_unit": _s("Unit to convert into, e.g. 'kilometers'.")},
          ["value", "from_unit", "to_unit"]),
]}

N = None  # "may be left out"
WORKDAYS = [["mon", "tue", "wed", "thu", "fri"]]


def call(tool: str, /, **arguments: list[Any]) -> dict[str, Any]:
    """An expected call: each parameter's list of acceptable values (``None``: may be omitted)."""
    for key, values in arguments.items():
        assert isinstance(values, list) and values, (tool, key)
    return {"name": tool, "arguments": arguments}


def use(id_: str, name: str, input_: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": id_, "name": name, "input": input_}


def result(id_: str, content: str, *, error: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": id_, "content": content}
    if error:
        block["is_error"] = True
    return block


def user(*content: Any) -> dict[str, Any]:
    if len(content) == 1 and isinstance(content[0], str):
        return {"role": "user", "content": content[0]}
    return {"role": "user", "content": list(content)}


def assistant(*content: Any) -> dict[str, Any]:
    blocks = [{"type": "text", "text": c} if isinstance(c, str) else c for c in content]
    return {"role": "assistant", "content": blocks}


CASES: list[dict[str, Any]] = []


def case(id_: str, lang: str, tags: list[str], tools: list[str],
         messages: str | list[dict[str, Any]], expected: list[dict[str, Any]],
         choice: str = "any") -> None:
    msgs = [user(messages)] if isinstance(messages, str) else messages
    turns = sum(1 for m in msgs if m["role"] == "user" and isinstance(m["content"], str))
    category = [lang, *tags]
    if choice == "auto" and "auto" not in category:
        category.append("auto")
    if len(tools) > 1:
        category.append("distractors")
    if len(expected) > 1:
        category.append("two_calls")
    if len(msgs) > 1:
        category.append("multi_turn")
        if turns >= 3:
            category.append("third_turn")
    side = {"set_timer", "cancel_timer", "set_alarm", "create_reminder", "set_thermostat",
            "set_lights", "lock_door", "send_email", "send_message", "call_contact",
            "create_calendar_event", "transfer_money", "move_file", "delete_file",
            "create_folder", "add_to_shopping_list", "book_table", "book_hotel", "book_taxi",
            "play_music", "set_volume", "create_note"}
    if any(e["name"] in side for e in expected):
        category.append("side_effect")
    CASES.append({
        "id": id_,
        "lang": lang,
        "category": category,
        "system": SYSTEM,
        "tools": [TOOLS[t] for t in tools],
        "tool_choice": {"type": choice},
        "messages": msgs,
        "expected": expected,
    })


def when(*values: str) -> list[Any]:
    """A local date-time: with or without seconds."""
    return [v for x in values for v in (x, x + ":00")]


# --------------------------------------------------------------------------- English
case("en_timer_simple", "en", ["numbers"], ["set_timer", "set_alarm", "create_reminder"],
     "Set a timer for 12 minutes.",
     [call("set_timer", minutes=[12], label=[N])])
case("en_timer_trap_last", "en", ["trap", "numbers"], ["set_timer", "cancel_timer", "set_alarm"],
     "Set a timer for 10 minutes; my last one was for 15 minutes.",
     [call("set_timer", minutes=[10], label=[N])])
case("en_thermostat_trap_outside", "en", ["trap", "numbers", "units"],
     ["set_thermostat", "get_weather", "set_lights"],
     "It's 25 degrees outside; set the thermostat to 21 degrees celsius.",
     [call("set_thermostat", temperature=[21], unit=["celsius"], room=[N])])
case("en_timer_trap_weather", "en", ["trap", "numbers"], ["set_timer", "get_weather"],
     "Start a 5 minute timer for the tea; the weather in Paris can wait.",
     [call("set_timer", minutes=[5], label=[N, "tea", "the tea"])])
case("en_timer_hour_and_half", "en", ["numbers", "units"], ["set_timer", "set_alarm"],
     "Timer for an hour and a half, please.",
     [call("set_timer", minutes=[90], label=[N])])
case("en_timer_seconds", "en", ["numbers", "units", "optional"], ["set_timer", "set_alarm"],
     "Set a 45 second timer for the eggs.",
     [call("set_timer", minutes=[0.75], label=[N, "eggs", "the eggs"])])
case("en_alarm_weekdays", "en", ["numbers", "optional"],
     ["set_alarm", "set_timer", "create_reminder"],
     "Wake me up at 6:45 every weekday.",
     [call("set_alarm", time=["06:45"], days=WORKDAYS, label=[N, "wake up", "wake me up"])])
case("en_alarm_pm", "en", ["numbers"], ["set_alarm", "set_timer"],
     "Set an alarm for 7:30 pm.",
     [call("set_alarm", time=["19:30"], days=[N], label=[N])])
case("en_alarm_correction", "en", ["trap", "numbers"], ["set_alarm", "set_timer"],
     "Set an alarm for 6 tomorrow morning - no wait, make it 6:30.",
     [call("set_alarm", time=["06:30"], days=[N], label=[N])])
case("en_lights_dim", "en", ["numbers", "optional"],
     ["set_lights", "set_thermostat", "lock_door"],
     "Dim the bedroom lights to 30 percent.",
     [call("set_lights", room=["bedroom"], power=["on"], brightness=[30], color=[N])])
case("en_lights_two_rooms", "en", [], ["set_lights", "set_thermostat", "lock_door"],
     "Turn off the lights in the kitchen and the hallway.",
     [call("set_lights", room=["kitchen"], power=["off"], brightness=[N], color=[N]),
      call("set_lights", room=["hallway", "hall"], power=["off"], brightness=[N], color=[N])])
case("en_email_quoted", "en", ["names"], ["send_email", "send_message", "find_contact"],
     'Send an email to maria.lopez@example.com with the subject "Quarterly report" saying '
     '"The report is in the shared drive."',
     [call("send_email", to=[["maria.lopez@example.com"]], subject=["Quarterly report"],
           body=["The report is in the shared drive.", "The report is in the shared drive"],
           cc=[N])])
case("en_email_cc", "en", ["names", "optional"], ["send_email", "send_message"],
     'Email tom@acme.io and cc jane@acme.io. Subject "Offsite", body "The bus leaves at 8."',
     [call("send_email", to=[["tom@acme.io"]], subject=["Offsite"],
           body=["The bus leaves at 8.", "The bus leaves at 8"], cc=[["jane@acme.io"]])])
case("en_message_late", "en", ["names"], ["send_message", "send_email", "call_contact"],
     "Text Anna that I'm running 10 minutes late.",
     [call("send_message", recipient=["Anna"],
           text=["I'm running 10 minutes late", "I'm running 10 minutes late.",
                 "I am running 10 minutes late", "I am running 10 minutes late.",
                 "Running 10 minutes late", "Running 10 minutes late.",
                 "I'm running 10 minutes late!", "Sorry, I'm running 10 minutes late.",
                 "Sorry, I'm running 10 minutes late!"])])
case("en_transfer_checking", "en", ["numbers", "names", "optional"],
     ["transfer_money", "convert_currency", "send_message"],
     "Send 250 dollars from my checking account to Jamie Chen for the concert tickets.",
     [call("transfer_money", from_account=["checking"], to=["Jamie Chen"], amount=[250],
           currency=["USD"], reference=[N, "concert tickets", "for the concert tickets"])])
case("en_transfer_iban_trap", "en", ["trap", "numbers", "names"],
     ["transfer_money", "convert_currency"],
     "Move 1,200 euros from savings to my landlord, IBAN DE44 5001 0517 5407 3249 31. "
     "My balance is 3,400 euros.",
     [call("transfer_money", from_account=["savings"],
           to=["DE44 5001 0517 5407 3249 31", "DE44500105175407324931"], amount=[1200],
           currency=["EUR"], reference=[N])])
case("en_convert_gbp_jpy", "en", ["numbers"], ["convert_currency", "transfer_money",
                                               "get_stock_price"],
     "How much is 80 pounds in Japanese yen?",
     [call("convert_currency", amount=[80], from_currency=["GBP"], to_currency=["JPY"])])
case("en_convert_cad", "en", ["numbers"], ["convert_currency", "convert_units"],
     "Convert 1500 Canadian dollars to euros.",
     [call("convert_currency", amount=[1500], from_currency=["CAD"], to_currency=["EUR"])])
case("en_weather_days_unit", "en", ["numbers", "units", "optional"],
     ["get_weather", "web_search"],
     "What's the weather going to be like in Seattle over the next 3 days, in Fahrenheit?",
     [call("get_weather", city=["Seattle"], unit=["fahrenheit"], days=[3])])
case("en_weather_two_cities", "en", [], ["get_weather", "web_search", "get_directions"],
     "Is it raining in Dublin or in Galway right now?",
     [call("get_weather", city=["Dublin"], unit=[N, "celsius"], days=[N, 1]),
      call("get_weather", city=["Galway"], unit=[N, "celsius"], days=[N, 1])])
case("en_search_quoted", "en", ["trap"], ["web_search", "search_flights", "translate_text"],
     'Search the web for "cheap flights to Lisbon in October".',
     [call("web_search", query=["cheap flights to Lisbon in October"], max_results=[N, 5])])
case("en_translate_italian", "en", [], ["translate_text", "web_search", "send_message"],
     'Translate "Where is the train station?" into Italian.',
     [call("translate_text", text=["Where is the train station?"], target_language=["it"],
           source_language=[N, "en"])])
case("en_file_move", "en", ["names"], ["move_file", "delete_file", "create_folder",
                                       "list_files"],
     "Move report_final.pdf from Downloads into the Documents/Work folder.",
     [call("move_file", source=["Downloads/report_final.pdf", "~/Downloads/report_final.pdf"],
           destination=["Documents/Work/report_final.pdf", "Documents/Work",
                        "Documents/Work/", "~/Documents/Work/report_final.pdf",
                        "~/Documents/Work", "~/Documents/Work/"])])
case("en_file_delete", "en", ["names"], ["delete_file", "move_file", "list_files"],
     "Delete the file /tmp/old_backup.zip.",
     [call("delete_file", path=["/tmp/old_backup.zip"])])
case("en_file_list_pdf", "en", ["optional"], ["list_files", "delete_file", "move_file"],
     "Which PDFs are in my Invoices folder?",
     [call("list_files", path=["Invoices", "Invoices/", "~/Invoices"],
           pattern=["*.pdf", N])])
case("en_shopping_three", "en", ["numbers"], ["add_to_shopping_list", "create_note"],
     "Add milk, eggs and two avocados to my shopping list.",
     [call("add_to_shopping_list",
           items=[["milk", "eggs", "two avocados"], ["milk", "eggs", "2 avocados"],
                  ["milk", "eggs", "avocados"]],
           list_name=[N, "shopping list", "groceries", "grocery list"])])
case("en_shopping_named_list", "en", ["optional"], ["add_to_shopping_list", "create_note"],
     "Put charcoal and paper plates on the BBQ list.",
     [call("add_to_shopping_list", items=[["charcoal", "paper plates"]],
           list_name=["BBQ", "BBQ list"])])
case("en_restaurant_friday", "en", ["dates", "numbers", "names"],
     ["book_table", "create_calendar_event", "book_taxi"],
     "Book a table for 4 at Luigi's on Friday at 7:30 pm.",
     [call("book_table", restaurant=["Luigi's", "Luigis"], date=["2025-06-13"],
           time=["19:30"], party_size=[4], notes=[N])])
case("en_calendar_dentist", "en", ["dates", "numbers", "optional"],
     ["create_calendar_event", "create_reminder", "set_alarm"],
     "Put a dentist appointment in my calendar for June 18 at 9:15; it takes 45 minutes.",
     [call("create_calendar_event", title=["Dentist appointment", "Dentist"],
           date=["2025-06-18"], start_time=["09:15"], duration_minutes=[45], location=[N],
           attendees=[N])])
case("en_reminder_tomorrow", "en", ["dates"], ["create_reminder", "set_alarm", "create_note"],
     "Remind me tomorrow at 8 am to take out the recycling.",
     [call("create_reminder", text=["take out the recycling", "take the recycling out"],
           when=when("2025-06-11T08:00"))])
case("en_flights_business", "en", ["dates", "numbers", "optional"],
     ["search_flights", "book_hotel", "web_search"],
     "Find business class flights from Chicago to Tokyo on July 2 for two people.",
     [call("search_flights", origin=["Chicago", "ORD", "CHI"],
           destination=["Tokyo", "NRT", "HND", "TYO"], date=["2025-07-02"], passengers=[2],
           cabin=["business"])])
case("en_hotel_vienna", "en", ["dates", "numbers", "optional"],
     ["book_hotel", "search_flights", "book_table"],
     "Book a hotel in Vienna from July 4 to July 7 for 2 guests.",
     [call("book_hotel", city=["Vienna"], check_in=["2025-07-04"], check_out=["2025-07-07"],
           guests=[2], rooms=[N, 1])])
case("en_lock_garage", "en", [], ["lock_door", "set_lights", "set_thermostat"],
     "Lock the garage door.",
     [call("lock_door", door=["garage"], action=["lock"])])
case("en_volume", "en", ["numbers"], ["set_volume", "play_music", "set_lights"],
     "Turn the volume down to 20.",
     [call("set_volume", level=[20])])
case("en_music_shuffle", "en", ["optional", "names"], ["play_music", "set_volume",
                                                       "web_search"],
     "Play some Miles Davis on shuffle.",
     [call("play_music", query=["Miles Davis"], shuffle=[True])])
case("en_directions_subway", "en", ["names", "optional"],
     ["get_directions", "book_taxi", "web_search"],
     "How do I get to the Museum of Modern Art by subway?",
     [call("get_directions",
           destination=["Museum of Modern Art", "the Museum of Modern Art", "MoMA"],
           mode=["transit"])])
case("en_timer_and_lights", "en", ["numbers"], ["set_timer", "set_lights", "set_alarm"],
     "Set a timer for 20 minutes and turn on the kitchen lights.",
     [call("set_timer", minutes=[20], label=[N]),
      call("set_lights", room=["kitchen"], power=["on"], brightness=[N], color=[N])])
case("en_auto_umbrella", "en", ["auto", "dates"], ["get_weather", "create_reminder"],
     "Will I need an umbrella in Amsterdam tomorrow?",
     [call("get_weather", city=["Amsterdam"], unit=[N, "celsius"], days=[2, 3, 4, 5, 6, 7])],
     choice="auto")
case("en_auto_stock", "en", ["auto", "names"], ["get_stock_price", "web_search",
                                                "convert_currency"],
     "What's Apple's stock trading at right now?",
     [call("get_stock_price", symbol=["AAPL"])],
     choice="auto")
case("en_units_marathon", "en", ["numbers", "units"], ["convert_units", "convert_currency"],
     "How many kilometers is 26.2 miles?",
     [call("convert_units", value=[26.2], from_unit=["miles", "mile", "mi"],
           to_unit=["kilometers", "kilometer", "km", "kilometres", "kilometre"])])
case("en_taxi_airport", "en", ["names", "numbers"], ["book_taxi", "get_directions",
                                                     "search_flights"],
     "Get me a taxi from the Hilton on 5th Avenue to JFK at 6 pm.",
     [call("book_taxi",
           pickup=["the Hilton on 5th Avenue", "Hilton on 5th Avenue", "Hilton, 5th Avenue",
                   "Hilton 5th Avenue"],
           destination=["JFK", "JFK Airport", "JFK International Airport"],
           time=["18:00"])])
case("en_note_quoted", "en", [], ["create_note", "create_reminder", "send_message"],
     'Make a note titled "Gift ideas": "scarf for dad, book for Lily".',
     [call("create_note", title=["Gift ideas"], content=["scarf for dad, book for Lily"])])
case("en_thermostat_fahrenheit_room", "en", ["numbers", "units"],
     ["set_thermostat", "set_lights", "get_weather"],
     "Set the upstairs thermostat to 68.",
     [call("set_thermostat", temperature=[68], unit=["fahrenheit"], room=["upstairs"])])
case("en_call_sister", "en", ["names"], ["call_contact", "send_message", "find_contact"],
     "Call my sister Emma.",
     [call("call_contact", name=["Emma", "my sister Emma"])])
case("en_tool_choice_tool", "en", ["names"], ["send_message", "send_email"],
     "Tell Omar the meeting moved to 3 pm.",
     [call("send_message", recipient=["Omar"],
           text=["The meeting moved to 3 pm", "The meeting moved to 3 pm.",
                 "The meeting moved to 3pm", "The meeting moved to 3pm.",
                 "The meeting has moved to 3 pm.", "The meeting has moved to 3 pm",
                 "The meeting has been moved to 3 pm.", "The meeting has been moved to 3 pm",
                 "Meeting moved to 3 pm", "Meeting moved to 3 pm."])])
CASES[-1]["tool_choice"] = {"type": "tool", "name": "send_message"}
CASES[-1]["category"].append("tool_choice_tool")

case("en_convert_two_targets", "en", ["numbers"], ["convert_currency", "transfer_money"],
     "Convert 100 US dollars to euros and to British pounds.",
     [call("convert_currency", amount=[100], from_currency=["USD"], to_currency=["EUR"]),
      call("convert_currency", amount=[100], from_currency=["USD"], to_currency=["GBP"])])

# English, several turns
case("en_mt_another_timer", "en", ["numbers", "trap"], ["set_timer", "cancel_timer"], [
    user("Set a timer for 15 minutes for the pasta."),
    assistant(use("toolu_a1", "set_timer", {"minutes": 15, "label": "pasta"})),
    user(result("toolu_a1", "Timer 'pasta' set for 15:00.")),
    assistant("Done - a 15-minute pasta timer is running."),
    user("And another one for 4 minutes for the garlic bread."),
], [call("set_timer", minutes=[4], label=[N, "garlic bread", "the garlic bread"])])
case("en_mt_contact_then_email", "en", ["names"], ["find_contact", "send_email",
                                                   "send_message"], [
    user('Email Priya the agenda: subject "Agenda", body "Here is the agenda for Monday."'),
    assistant("I'll look up Priya's address first.",
              use("toolu_b1", "find_contact", {"name": "Priya"})),
    user(result("toolu_b1", '{"name": "Priya Natarajan", "email": "priya.n@example.org", '
                            '"phone": "+1 555 0134"}')),
], [call("send_email", to=[["priya.n@example.org"]], subject=["Agenda"],
         body=["Here is the agenda for Monday.", "Here is the agenda for Monday"], cc=[N])],
     choice="auto")
case("en_mt_weather_then_reminder", "en", ["dates", "trap"],
     ["get_weather", "create_reminder", "set_alarm"], [
    user("What's the weather in Lyon tomorrow?"),
    assistant(use("toolu_c1", "get_weather", {"city": "Lyon", "days": 2})),
    user(result("toolu_c1", "Today: 18°C, cloudy. Tomorrow: 11°C, heavy rain.")),
    assistant("Tomorrow in Lyon: 11°C with heavy rain."),
    user("Ugh. Remind me at 7:30 tomorrow morning to take an umbrella."),
], [call("create_reminder", text=["take an umbrella", "take umbrella", "take my umbrella",
                                  "bring an umbrella"],
         when=when("2025-06-11T07:30"))])
case("en_mt_convert_then_transfer", "en", ["numbers", "names"],
     ["convert_currency", "transfer_money"], [
    user("How much is 500 euros in dollars?"),
    assistant(use("toolu_d1", "convert_currency",
                  {"amount": 500, "from_currency": "EUR", "to_currency": "USD"})),
    user(result("toolu_d1", "500 EUR = 541.30 USD")),
    assistant("500 euros is about 541.30 US dollars."),
    user("OK, send that dollar amount to Marcus from my checking account."),
], [call("transfer_money", from_account=["checking"], to=["Marcus"], amount=[541.30],
         currency=["USD"], reference=[N])])
case("en_mt_third_turn_dim", "en", ["numbers", "optional"], ["set_lights", "set_thermostat"], [
    user("Turn on the living room lights."),
    assistant(use("toolu_e1", "set_lights", {"room": "living room", "power": "on"})),
    user(result("toolu_e1", "ok")),
    assistant("The living room lights are on."),
    user("Make them warm white."),
    assistant(use("toolu_e2", "set_lights",
                  {"room": "living room", "power": "on", "color": "warm white"})),
    user(result("toolu_e2", "ok")),
    assistant("Done, they're warm white now."),
    user("Now dim them to 40%."),
], [call("set_lights", room=["living room"], power=["on"], brightness=[40],
         color=[N, "warm white"])])
case("en_mt_followup_event", "en", ["dates", "numbers", "names", "optional"],
     ["create_calendar_event", "send_email"], [
    user("Create an event 'Team sync' on 2025-06-12 at 10:00."),
    assistant(use("toolu_f1", "create_calendar_event",
                  {"title": "Team sync", "date": "2025-06-12", "start_time": "10:00"})),
    user(result("toolu_f1", "Created event ev_88.")),
    assistant("Team sync is in your calendar for Thursday at 10:00."),
    user("Also add a 30-minute follow-up called 'Sync notes' the same day at 15:30 and invite "
         "ben@corp.com and li@corp.com."),
], [call("create_calendar_event", title=["Sync notes"], date=["2025-06-12"],
         start_time=["15:30"], duration_minutes=[30], location=[N],
         attendees=[["ben@corp.com", "li@corp.com"]])])
case("en_mt_error_then_folder", "en", ["names"], ["move_file", "create_folder", "delete_file"], [
    user("Move notes.txt into the archive folder."),
    assistant(use("toolu_g1", "move_file",
                  {"source": "notes.txt", "destination": "archive/notes.txt"})),
    user(result("toolu_g1", "Error: folder 'archive' does not exist.", error=True)),
], [call("create_folder", path=["archive", "archive/", "~/archive"])])

# --------------------------------------------------------------------------- German
case("de_timer", "de", ["numbers"], ["set_timer", "set_alarm"],
     "Stell einen Timer auf 8 Minuten.",
     [call("set_timer", minutes=[8], label=[N])])
case("de_thermostat_room", "de", ["numbers", "units"],
     ["set_thermostat", "set_lights", "get_weather"],
     "Stell die Heizung im Wohnzimmer auf 22 Grad.",
     [call("set_thermostat", temperature=[22], unit=["celsius"],
           room=["Wohnzimmer", "living room"])])
case("de_thermostat_trap_outside", "de", ["trap", "numbers", "units"],
     ["set_thermostat", "get_weather"],
     "Draußen hat es 30 Grad - stell das Thermostat auf 19 Grad.",
     [call("set_thermostat", temperature=[19], unit=["celsius"], room=[N])])
case("de_lights_off", "de", [], ["set_lights", "lock_door"],
     "Mach das Licht in der Küche aus.",
     [call("set_lights", room=["Küche", "kitchen"], power=["off"], brightness=[N],
           color=[N])])
case("de_transfer_comma", "de", ["numbers", "names", "optional"],
     ["transfer_money", "convert_currency"],
     "Überweise 75,50 Euro von meinem Girokonto an Lena Becker, Verwendungszweck "
     "Nebenkosten Juni.",
     [call("transfer_money", from_account=["checking"], to=["Lena Becker"], amount=[75.5],
           currency=["EUR"], reference=["Nebenkosten Juni"])])
case("de_weather_tomorrow", "de", ["dates"], ["get_weather", "web_search"],
     "Wie wird das Wetter morgen in Hamburg?",
     [call("get_weather", city=["Hamburg"], unit=[N, "celsius"], days=[2, 3, 4, 5, 6, 7])],
     choice="auto")
case("de_email_quoted", "de", ["names"], ["send_email", "send_message"],
     'Schick eine E-Mail an kai.weber@example.de mit dem Betreff "Termin" und dem Text '
     '"Passt dir Donnerstag um 14 Uhr?"',
     [call("send_email", to=[["kai.weber@example.de"]], subject=["Termin"],
           body=["Passt dir Donnerstag um 14 Uhr?"], cc=[N])])
case("de_alarm_halb", "de", ["numbers", "trap"], ["set_alarm", "set_timer"],
     "Weck mich morgen um halb sieben.",
     [call("set_alarm", time=["06:30"], days=[N], label=[N])])
case("de_shopping", "de", [], ["add_to_shopping_list", "create_note"],
     "Setz Butter, Mehl und Zucker auf die Einkaufsliste.",
     [call("add_to_shopping_list",
           items=[["Butter", "Mehl", "Zucker"], ["butter", "flour", "sugar"]],
           list_name=[N, "Einkaufsliste", "groceries"])])
case("de_convert_chf", "de", ["numbers"], ["convert_currency", "transfer_money"],
     "Wie viel sind 200 Schweizer Franken in Euro?",
     [call("convert_currency", amount=[200], from_currency=["CHF"], to_currency=["EUR"])],
     choice="auto")
case("de_lights_and_timer", "de", ["numbers"], ["set_lights", "set_timer", "set_alarm"],
     "Schalte das Licht im Bad an und stell einen Timer auf 15 Minuten.",
     [call("set_lights", room=["Bad", "Badezimmer", "bathroom"], power=["on"],
           brightness=[N], color=[N]),
      call("set_timer", minutes=[15], label=[N])])
case("de_calendar_dinner", "de", ["dates", "names", "optional"],
     ["create_calendar_event", "book_table", "create_reminder"],
     "Trag mir am 3. Juli um 18 Uhr ein Abendessen mit Jonas ein.",
     [call("create_calendar_event", title=["Abendessen mit Jonas", "Abendessen"],
           date=["2025-07-03"], start_time=["18:00"], duration_minutes=[N, 60],
           location=[N], attendees=[N, ["Jonas"]])])
case("de_mt_second_timer", "de", ["numbers", "trap"], ["set_timer", "cancel_timer"], [
    user("Stell einen Timer auf 20 Minuten."),
    assistant(use("toolu_h1", "set_timer", {"minutes": 20})),
    user(result("toolu_h1", "Timer gestellt: 20:00.")),
    assistant("Der Timer läuft: 20 Minuten."),
    user("Mach noch einen für 3 Minuten fürs Ei."),
], [call("set_timer", minutes=[3], label=[N, "Ei", "Eier", "egg"])])
case("de_mt_contact_message", "de", ["names"], ["find_contact", "send_message", "call_contact"], [
    user("Schreib Herrn Vogel, dass das Paket angekommen ist."),
    assistant(use("toolu_i1", "find_contact", {"name": "Vogel"})),
    user(result("toolu_i1", '{"name": "Thomas Vogel", "email": "t.vogel@example.de", '
                            '"phone": "+49 170 5550123"}')),
], [call("send_message", recipient=["Thomas Vogel", "+49 170 5550123", "+491705550123",
                                    "Herr Vogel", "Vogel"],
         text=["Das Paket ist angekommen.", "Das Paket ist angekommen",
               "Das Paket ist angekommen!", "Ihr Paket ist angekommen.",
               "Hallo Herr Vogel, das Paket ist angekommen."])])
case("de_hotel_nights", "de", ["dates", "numbers"], ["book_hotel", "search_flights"],
     "Buch mir ein Hotel in Leipzig vom 20. bis 22. Juni für eine Person.",
     [call("book_hotel", city=["Leipzig"], check_in=["2025-06-20"], check_out=["2025-06-22"],
           guests=[1], rooms=[N, 1])])

# --------------------------------------------------------------------------- French
case("fr_timer", "fr", ["numbers"], ["set_timer", "set_alarm"],
     "Mets un minuteur de 25 minutes.",
     [call("set_timer", minutes=[25], label=[N])])
case("fr_timer_trap_yesterday", "fr", ["trap", "numbers"], ["set_timer", "cancel_timer"],
     "Mets un minuteur de 12 minutes ; hier c'était 20 minutes.",
     [call("set_timer", minutes=[12], label=[N])])
case("fr_thermostat_decimal", "fr", ["numbers", "units"], ["set_thermostat", "get_weather"],
     "Règle le thermostat à 19,5 degrés.",
     [call("set_thermostat", temperature=[19.5], unit=["celsius"], room=[N])])
case("fr_lights_bedroom", "fr", ["numbers", "optional"], ["set_lights", "set_volume"],
     "Allume la lumière de la chambre à 50 %.",
     [call("set_lights", room=["chambre", "la chambre", "bedroom"], power=["on"],
           brightness=[50], color=[N])])
case("fr_message", "fr", ["names"], ["send_message", "send_email", "call_contact"],
     "Envoie un message à Julien : « J'arrive dans dix minutes ».",
     [call("send_message", recipient=["Julien"],
           text=["J'arrive dans dix minutes", "J'arrive dans dix minutes.",
                 "J'arrive dans 10 minutes", "J'arrive dans 10 minutes."])])
case("fr_transfer_savings", "fr", ["numbers", "names"], ["transfer_money", "convert_currency"],
     "Vire 300 euros de mon compte épargne vers Claire Martin.",
     [call("transfer_money", from_account=["savings"], to=["Claire Martin"], amount=[300],
           currency=["EUR"], reference=[N])])
case("fr_weather", "fr", [], ["get_weather", "web_search"],
     "Quel temps fait-il à Marseille ?",
     [call("get_weather", city=["Marseille"], unit=[N, "celsius"], days=[N, 1])],
     choice="auto")
case("fr_translate_english", "fr", [], ["translate_text", "send_message"],
     "Traduis « Bonne nuit et à demain » en anglais.",
     [call("translate_text", text=["Bonne nuit et à demain"], target_language=["en"],
           source_language=[N, "fr"])])
case("fr_restaurant_saturday", "fr", ["dates", "numbers", "names"],
     ["book_table", "create_calendar_event"],
     "Réserve une table pour deux chez Le Petit Zinc samedi à 20 h.",
     [call("book_table", restaurant=["Le Petit Zinc"], date=["2025-06-14"], time=["20:00"],
           party_size=[2], notes=[N])])
case("fr_reminder_plumber", "fr", ["dates"], ["create_reminder", "call_contact", "set_alarm"],
     "Rappelle-moi d'appeler le plombier demain à 9 h.",
     [call("create_reminder", text=["appeler le plombier", "Appeler le plombier.",
                                    "call the plumber"],
           when=when("2025-06-11T09:00"))])
case("fr_weather_two_cities", "fr", [], ["get_weather", "web_search"],
     "Donne-moi la météo à Lille et à Nantes.",
     [call("get_weather", city=["Lille"], unit=[N, "celsius"], days=[N, 1]),
      call("get_weather", city=["Nantes"], unit=[N, "celsius"], days=[N, 1])])
case("fr_convert_usd", "fr", ["numbers"], ["convert_currency", "transfer_money"],
     "Combien font 90 dollars américains en euros ?",
     [call("convert_currency", amount=[90], from_currency=["USD"], to_currency=["EUR"])])
case("fr_mt_contact_then_email", "fr", ["names"], ["find_contact", "send_email"], [
    user("Envoie le compte rendu à Sophie : objet « Compte rendu », texte « Voici le compte "
         "rendu de la réunion. »"),
    assistant(use("toolu_j1", "find_contact", {"name": "Sophie"})),
    user(result("toolu_j1", '{"name": "Sophie Durand", "email": "sophie.durand@example.fr", '
                            '"phone": "+33 6 55 01 23 45"}')),
], [call("send_email", to=[["sophie.durand@example.fr"]], subject=["Compte rendu"],
         body=["Voici le compte rendu de la réunion.", "Voici le compte rendu de la réunion"],
         cc=[N])])
case("fr_mt_third_turn_volume", "fr", ["numbers", "trap"], ["set_volume", "play_music"], [
    user("Mets du jazz."),
    assistant(use("toolu_k1", "play_music", {"query": "jazz"})),
    user(result("toolu_k1", "Lecture : jazz.")),
    assistant("C'est parti pour du jazz."),
    user("Monte le son à 60."),
    assistant(use("toolu_k2", "set_volume", {"level": 60})),
    user(result("toolu_k2", "Volume : 60 %.")),
    assistant("Volume réglé à 60 %."),
    user("C'est trop fort, baisse à 35."),
], [call("set_volume", level=[35])])
case("fr_lights_and_lock", "fr", [], ["set_lights", "lock_door", "set_thermostat"],
     "Éteins la lumière du salon et verrouille la porte d'entrée.",
     [call("set_lights", room=["salon", "le salon", "living room"], power=["off"],
           brightness=[N], color=[N]),
      call("lock_door", door=["front"], action=["lock"])])
case("fr_lock_front", "fr", [], ["lock_door", "set_lights"],
     "Déverrouille la porte d'entrée.",
     [call("lock_door", door=["front"], action=["unlock"])])

# --------------------------------------------------------------------------- Spanish
case("es_timer_seconds", "es", ["numbers", "units"], ["set_timer", "set_alarm"],
     "Pon un temporizador de 30 segundos.",
     [call("set_timer", minutes=[0.5], label=[N])])
case("es_alarm_weekdays", "es", ["numbers"], ["set_alarm", "set_timer", "create_reminder"],
     "Pon una alarma a las 7 de la mañana de lunes a viernes.",
     [call("set_alarm", time=["07:00"], days=WORKDAYS, label=[N])])
case("es_lights_off", "es", [], ["set_lights", "set_thermostat"],
     "Apaga las luces del salón.",
     [call("set_lights", room=["salón", "salon", "living room"], power=["off"],
           brightness=[N], color=[N])])
case("es_transfer_concept", "es", ["numbers", "names", "optional"],
     ["transfer_money", "send_message"],
     "Transfiere 50 euros de mi cuenta corriente a Pablo Ruiz con el concepto cena.",
     [call("transfer_money", from_account=["checking"], to=["Pablo Ruiz"], amount=[50],
           currency=["EUR"], reference=["cena"])])
case("es_weather_days", "es", ["numbers", "optional"], ["get_weather", "web_search"],
     "¿Qué tiempo hará en Madrid los próximos 5 días?",
     [call("get_weather", city=["Madrid"], unit=[N, "celsius"], days=[5])],
     choice="auto")
case("es_shopping", "es", [], ["add_to_shopping_list", "create_note"],
     "Añade tomates, cebollas y pan a la lista de la compra.",
     [call("add_to_shopping_list",
           items=[["tomates", "cebollas", "pan"], ["tomatoes", "onions", "bread"]],
           list_name=[N, "lista de la compra", "la lista de la compra", "compra", "groceries"])])
case("es_email_quoted", "es", ["names"], ["send_email", "send_message"],
     'Manda un correo a lucia@example.es con asunto "Factura" y texto "Te envío la factura '
     'mañana."',
     [call("send_email", to=[["lucia@example.es"]], subject=["Factura"],
           body=["Te envío la factura mañana.", "Te envío la factura mañana"], cc=[N])])
case("es_flights_three", "es", ["dates", "numbers", "optional"],
     ["search_flights", "book_hotel"],
     "Busca vuelos de Madrid a Buenos Aires el 15 de agosto para tres personas.",
     [call("search_flights", origin=["Madrid", "MAD"],
           destination=["Buenos Aires", "EZE", "BUE"], date=["2025-08-15"], passengers=[3],
           cabin=[N, "economy"])])
case("es_thermostat_trap_yesterday", "es", ["trap", "numbers", "units"],
     ["set_thermostat", "get_weather"],
     "Ayer pusiste la calefacción a 24 grados; hoy ponla a 20.",
     [call("set_thermostat", temperature=[20], unit=["celsius"], room=[N])])
case("es_timer_and_reminder", "es", ["numbers", "dates"],
     ["set_timer", "create_reminder", "set_alarm"],
     "Pon un temporizador de 10 minutos y recuérdame hoy a las 18:00 llamar a mamá.",
     [call("set_timer", minutes=[10], label=[N]),
      call("create_reminder", text=["llamar a mamá", "Llamar a mamá.", "call mom"],
           when=when("2025-06-10T18:00"))])
case("es_mt_convert_ellipsis", "es", ["numbers"], ["convert_currency", "transfer_money"], [
    user("¿Cuánto son 100 dólares en pesos mexicanos?"),
    assistant(use("toolu_l1", "convert_currency",
                  {"amount": 100, "from_currency": "USD", "to_currency": "MXN"})),
    user(result("toolu_l1", "100 USD = 1843.50 MXN")),
    assistant("Son unos 1.843,50 pesos mexicanos."),
    user("¿Y en euros?"),
], [call("convert_currency", amount=[100], from_currency=["USD"], to_currency=["EUR"])])
case("es_mt_third_turn_taxi", "es", ["names", "numbers"], ["book_taxi", "get_directions"], [
    user("¿Cómo llego al Museo del Prado?"),
    assistant(use("toolu_m1", "get_directions", {"destination": "Museo del Prado"})),
    user(result("toolu_m1", "25 min en coche, 50 min a pie.")),
    assistant("Son unos 25 minutos en coche o 50 a pie."),
    user("Demasiado lejos a pie. Pídeme un taxi desde el Hotel Atocha."),
    assistant(use("toolu_m2", "book_taxi",
                  {"pickup": "Hotel Atocha", "destination": "Museo del Prado"})),
    user(result("toolu_m2", "Taxi reservado: llega en 6 minutos.")),
    assistant("Tu taxi llega en 6 minutos."),
    user("Y para la vuelta, otro taxi del Prado al hotel a las 19:00."),
], [call("book_taxi", pickup=["Museo del Prado", "Prado", "el Prado"],
         destination=["Hotel Atocha", "hotel", "el hotel"], time=["19:00"])])

case("es_two_cities_weather", "es", [], ["get_weather", "search_flights"],
     "¿Qué tiempo hace hoy en Sevilla y en Bilbao?",
     [call("get_weather", city=["Sevilla", "Seville"], unit=[N, "celsius"], days=[N, 1]),
      call("get_weather", city=["Bilbao"], unit=[N, "celsius"], days=[N, 1])])

# --------------------------------------------------------------------------- Italian
case("it_timer", "it", ["numbers"], ["set_timer", "set_alarm"],
     "Imposta un timer di 7 minuti.",
     [call("set_timer", minutes=[7], label=[N])])
case("it_lights_off", "it", [], ["set_lights", "lock_door"],
     "Spegni la luce in cucina.",
     [call("set_lights", room=["cucina", "kitchen"], power=["off"], brightness=[N],
           color=[N])])
case("it_convert_gbp", "it", ["numbers"], ["convert_currency", "convert_units"],
     "Quanto sono 60 sterline in euro?",
     [call("convert_currency", amount=[60], from_currency=["GBP"], to_currency=["EUR"])],
     choice="auto")


def render() -> str:
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids)), "duplicate case id"
    return "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in CASES)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if cases.jsonl differs")
    args = parser.parse_args()
    text = render()
    if args.check:
        current = CASES_PATH.read_text(encoding="utf-8") if CASES_PATH.exists() else ""
        if current != text:
            print(f"{CASES_PATH} is out of date: run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    CASES_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {len(CASES)} cases to {CASES_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
