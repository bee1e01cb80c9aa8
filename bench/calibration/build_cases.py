"""Write ``cases.jsonl``: the calibration set of the local model's call decisions.

    python bench/calibration/build_cases.py            # rewrites bench/calibration/cases.jsonl
    python bench/calibration/build_cases.py --check    # exit 1 if the file is out of date

The set calibrates the thresholds of the techniques that read the model's likelihood
(``bench/calibration/calibrate.py``): call or answer in text, one more call or the end of the block. It
is neither BFCL nor the realistic set: the tools and requests were written from scratch for
it (their domains — a library, parcels, a pharmacy, parking, transit, a garden, a robot
vacuum, a kitchen, sports... — are none of the realistic set's), in seven languages, every
case under ``tool_choice: auto``, some with a fitting tool and some without (chat, general
knowledge, a request next to a tool that does not do it, the last turn of a tool loop whose
result is in). The format is the realistic set's (``bench/realistic/README.md``), so
``bench/realistic_set.py run --cases bench/calibration/cases.jsonl`` runs and scores it too.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CASES_PATH = HERE / "cases.jsonl"

SYSTEM = "You are a helpful assistant. Today is Thursday, 6 March 2025."


def _tool(name: str, description: str, properties: dict[str, Any],
          required: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "input_schema": {"type": "object", "properties": properties, "required": required},
    }


def _s(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def _i(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "integer", "description": description, **extra}


def _n(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "number", "description": description, **extra}


TOOLS: dict[str, dict[str, Any]] = {t["name"]: t for t in [
    _tool("search_library", "Search the city library's catalogue for books.",
          {"query": _s("Title, author or subject to search for."),
           "available_only": {"type": "boolean",
                              "description": "Only books that can be borrowed now."}},
          ["query"]),
    _tool("renew_loan", "Renew a book the user has borrowed from the library.",
          {"loan_id": _s("The loan's number, as on the receipt, e.g. L-4471.")},
          ["loan_id"]),
    _tool("track_parcel", "Where a parcel is now, and when it should arrive.",
          {"tracking_number": _s("The parcel's tracking number."),
           "carrier": {"type": "string", "enum": ["dhl", "ups", "fedex", "post"],
                       "description": "The carrier, if known."}},
          ["tracking_number"]),
    _tool("refill_prescription", "Ask the pharmacy to refill a prescription.",
          {"rx_number": _s("The prescription number."),
           "pickup_day": _s("Day to pick it up, YYYY-MM-DD.")},
          ["rx_number"]),
    _tool("pay_parking", "Pay for street parking in a zone of the city.",
          {"zone": _s("The parking zone's code, e.g. 'B12'."),
           "hours": _n("How long to park, in hours."),
           "plate": _s("Licence plate; omit to use the registered car.")},
          ["zone", "hours"]),
    _tool("next_departures", "The next departures from a public transport stop.",
          {"stop": _s("Name of the stop or station."),
           "line": _s("Only this line, e.g. 'U2' or 'bus 48'.")},
          ["stop"]),
    _tool("water_garden", "Run the garden's irrigation in one zone.",
          {"zone": {"type": "string", "enum": ["lawn", "vegetables", "roses", "hedge"]},
           "liters": _n("Amount of water in liters.")},
          ["zone", "liters"]),
    _tool("start_vacuum", "Send the robot vacuum to clean some rooms.",
          {"rooms": {"type": "array", "items": {"type": "string"},
                     "description": "Rooms to clean, e.g. ['kitchen', 'hall']."},
           "mode": {"type": "string", "enum": ["quiet", "standard", "turbo"]}},
          ["rooms"]),
    _tool("find_recipe", "Find recipes for a dish.",
          {"dish": _s("The dish or main ingredient."),
           "max_minutes": _i("Longest total time, in minutes."),
           "vegetarian": {"type": "boolean"}},
          ["dish"]),
    _tool("scale_recipe", "Scale a saved recipe's quantities to a number of servings.",
          {"recipe": _s("Name of the saved recipe."),
           "servings": _i("Number of servings.")},
          ["recipe", "servings"]),
    _tool("get_score", "The latest result or live score of a sports team.",
          {"team": _s("The team's name."),
           "sport": {"type": "string", "enum": ["football", "basketball", "hockey", "tennis"]}},
          ["team"]),
    _tool("log_workout", "Record a workout in the user's fitness diary.",
          {"activity": _s("The activity, e.g. 'running', 'swimming'."),
           "minutes": _i("Duration in minutes."),
           "distance_km": _n("Distance in kilometres, if any.")},
          ["activity", "minutes"]),
    _tool("print_document", "Print a file on the home printer.",
          {"file": _s("The file name."),
           "copies": _i("Number of copies.", default=1),
           "color": {"type": "boolean", "description": "Print in colour."}},
          ["file"]),
    _tool("air_quality", "Current air quality index of a city.",
          {"city": _s("The city.")},
          ["city"]),
    _tool("define_word", "Look up the definition of a word in a dictionary.",
          {"word": _s("The word."),
           "language": _s("Language of the word, ISO 639-1 code, e.g. 'en', 'de'.")},
          ["word"]),
    _tool("split_bill", "Split a bill between people, with an optional tip.",
          {"total": _n("The bill's total."),
           "people": _i("How many people share it."),
           "tip_percent": _n("Tip in percent.")},
          ["total", "people"]),
    _tool("feed_pet", "Release food from the automatic pet feeder.",
          {"grams": _i("Portion in grams.")},
          ["grams"]),
    _tool("book_court", "Book a tennis or squash court at the sports centre.",
          {"sport": {"type": "string", "enum": ["tennis", "squash"]},
           "date": _s("YYYY-MM-DD."),
           "time": _s("Start time, HH:MM.")},
          ["sport", "date", "time"]),
]}

N = None  # "may be left out"


def call(tool: str, /, **arguments: list[Any]) -> dict[str, Any]:
    """An expected call: each parameter's list of acceptable values (``None``: may be omitted)."""
    for key, values in arguments.items():
        assert isinstance(values, list) and values, (tool, key)
    return {"name": tool, "arguments": arguments}


def use(id_: str, name: str, input_: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": id_, "name": name, "input": input_}


def result(id_: str, content: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": id_, "content": content}


def user(*content: Any) -> dict[str, Any]:
    if len(content) == 1 and isinstance(content[0], str):
        return {"role": "user", "content": content[0]}
    return {"role": "user", "content": list(content)}


def assistant(*content: Any) -> dict[str, Any]:
    blocks = [{"type": "text", "text": c} if isinstance(c, str) else c for c in content]
    return {"role": "assistant", "content": blocks}


CASES: list[dict[str, Any]] = []


def case(id_: str, lang: str, tools: list[str], messages: str | list[dict[str, Any]],
         expected: list[dict[str, Any]], *tags: str) -> None:
    """A case under ``tool_choice: auto``; its tags say whether a call is due (``call``,
    ``calls`` for two or more, ``no_call``) and what kind of request it is."""
    msgs = [user(messages)] if isinstance(messages, str) else messages
    kind = "no_call" if not expected else "calls" if len(expected) > 1 else "call"
    category = [lang, kind, *tags]
    if len(msgs) > 1:
        category.append("multi_turn")
    CASES.append({
        "id": id_,
        "lang": lang,
        "category": category,
        "system": SYSTEM,
        "tools": [TOOLS[t] for t in tools],
        "tool_choice": {"type": "auto"},
        "messages": msgs,
        "expected": expected,
    })


# --------------------------------------------------------------------------- one call
case("en_library_search", "en", ["search_library", "renew_loan"],
     "Does the library have anything by Ursula K. Le Guin?",
     [call("search_library", query=["Ursula K. Le Guin", "Le Guin"], available_only=[N])])
case("en_renew", "en", ["search_library", "renew_loan", "print_document"],
     "Please renew my loan L-4471, I haven't finished the book yet.",
     [call("renew_loan", loan_id=["L-4471"])])
case("en_parcel", "en", ["track_parcel", "refill_prescription"],
     "Where is my parcel? The tracking number is 1Z999AA10123456784.",
     [call("track_parcel", tracking_number=["1Z999AA10123456784"], carrier=[N, "ups"])])
case("en_parking", "en", ["pay_parking", "next_departures", "air_quality"],
     "Pay for two hours of parking in zone B12.",
     [call("pay_parking", zone=["B12"], hours=[2], plate=[N])])
case("en_departures", "en", ["next_departures", "pay_parking"],
     "When does the next tram leave from Central Station?",
     [call("next_departures", stop=["Central Station"], line=[N])])
case("en_recipe", "en", ["find_recipe", "scale_recipe", "feed_pet"],
     "Find me a vegetarian lasagne recipe that takes under an hour.",
     [call("find_recipe", dish=["lasagne", "vegetarian lasagne"], max_minutes=[60, N],
           vegetarian=[True, N])])
case("en_score", "en", ["get_score", "book_court", "log_workout"],
     "How did the Boston Celtics do last night?",
     [call("get_score", team=["Boston Celtics", "Celtics"], sport=["basketball", N])])
case("en_workout", "en", ["log_workout", "get_score"],
     "Log a 45 minute swim for me.",
     [call("log_workout", activity=["swimming", "swim"], minutes=[45], distance_km=[N])])
case("en_print", "en", ["print_document", "define_word"],
     "Print three copies of invoice_march.pdf.",
     [call("print_document", file=["invoice_march.pdf"], copies=[3], color=[N])])
case("en_split", "en", ["split_bill", "find_recipe"],
     "We spent 84 dollars on dinner, split it between 4 of us with a 15% tip.",
     [call("split_bill", total=[84], people=[4], tip_percent=[15])])
case("en_feed", "en", ["feed_pet", "start_vacuum", "water_garden"],
     "Give the cat 40 grams of food.",
     [call("feed_pet", grams=[40])])
case("en_define", "en", ["define_word", "search_library"],
     "What does the word 'petrichor' mean?",
     [call("define_word", word=["petrichor"], language=[N, "en"])])
case("en_air", "en", ["air_quality", "next_departures"],
     "Is the air in Delhi OK to go running today?",
     [call("air_quality", city=["Delhi"])])
case("de_parcel", "de", ["track_parcel", "print_document"],
     "Wo ist mein DHL-Paket mit der Nummer 00340434161094042557?",
     [call("track_parcel", tracking_number=["00340434161094042557"], carrier=["dhl", N])])
case("de_departures", "de", ["next_departures", "air_quality"],
     "Wann fährt die nächste U2 ab Alexanderplatz?",
     [call("next_departures", stop=["Alexanderplatz"], line=["U2", N])])
case("de_water", "de", ["water_garden", "feed_pet"],
     "Bitte gieß die Rosen mit 10 Litern.",
     [call("water_garden", zone=["roses"], liters=[10])])
case("de_rx", "de", ["refill_prescription", "track_parcel"],
     "Kannst du mein Rezept RX-20931 nachbestellen?",
     [call("refill_prescription", rx_number=["RX-20931"], pickup_day=[N])])
case("fr_vacuum", "fr", ["start_vacuum", "water_garden"],
     "Lance l'aspirateur dans la cuisine.",
     [call("start_vacuum", rooms=[["cuisine"], ["kitchen"]], mode=[N])])
case("fr_score", "fr", ["get_score", "air_quality"],
     "Quel est le score du PSG ?",
     [call("get_score", team=["PSG", "Paris Saint-Germain"], sport=["football", N])])
case("fr_recipe", "fr", ["find_recipe", "define_word"],
     "Trouve-moi une recette de ratatouille.",
     [call("find_recipe", dish=["ratatouille"], max_minutes=[N], vegetarian=[N])])
case("fr_court", "fr", ["book_court", "get_score"],
     "Réserve un court de squash le 8 mars 2025 à 18:00.",
     [call("book_court", sport=["squash"], date=["2025-03-08"], time=["18:00"])])
case("es_parking", "es", ["pay_parking", "track_parcel"],
     "Paga el aparcamiento en la zona C4 durante tres horas.",
     [call("pay_parking", zone=["C4"], hours=[3], plate=[N])])
case("es_air", "es", ["air_quality", "define_word"],
     "¿Cómo está la calidad del aire en Madrid?",
     [call("air_quality", city=["Madrid"])])
case("es_workout", "es", ["log_workout", "split_bill"],
     "Apunta que corrí 5 kilómetros en 30 minutos.",
     [call("log_workout", activity=["running", "correr"], minutes=[30], distance_km=[5])])
case("it_library", "it", ["search_library", "renew_loan"],
     "Cerca in biblioteca 'Il nome della rosa'.",
     [call("search_library", query=["Il nome della rosa"], available_only=[N])])
case("it_bill", "it", ["split_bill", "feed_pet"],
     "Dividi un conto di 120 euro tra 3 persone.",
     [call("split_bill", total=[120], people=[3], tip_percent=[N])])
case("pt_define", "pt", ["define_word", "find_recipe"],
     "O que significa a palavra 'saudade'?",
     [call("define_word", word=["saudade"], language=[N, "pt"])])
case("pt_print", "pt", ["print_document", "track_parcel"],
     "Imprime o ficheiro relatorio.docx a cores.",
     [call("print_document", file=["relatorio.docx"], copies=[N, 1], color=[True])])
case("nl_departures", "nl", ["next_departures", "pay_parking"],
     "Wanneer vertrekt de volgende trein vanaf Utrecht Centraal?",
     [call("next_departures", stop=["Utrecht Centraal"], line=[N])])
case("nl_feed", "nl", ["feed_pet", "water_garden"],
     "Geef de hond 150 gram voer.",
     [call("feed_pet", grams=[150])])

# --------------------------------------------------------------------------- two or three calls
case("en_two_parcels", "en", ["track_parcel", "refill_prescription"],
     "Track both of my parcels: 1Z999AA10123456784 and 1Z999AA10987654321.",
     [call("track_parcel", tracking_number=["1Z999AA10123456784"], carrier=[N, "ups"]),
      call("track_parcel", tracking_number=["1Z999AA10987654321"], carrier=[N, "ups"])],
     "same_tool")
case("en_two_zones", "en", ["water_garden", "start_vacuum"],
     "Water the lawn with 20 liters and the vegetables with 8 liters.",
     [call("water_garden", zone=["lawn"], liters=[20]),
      call("water_garden", zone=["vegetables"], liters=[8])], "same_tool")
case("en_two_cities_air", "en", ["air_quality", "get_score"],
     "Compare the air quality in Beijing and in Seoul.",
     [call("air_quality", city=["Beijing"]), call("air_quality", city=["Seoul"])],
     "same_tool")
case("en_feed_and_vacuum", "en", ["feed_pet", "start_vacuum", "water_garden"],
     "Feed the dog 120 grams and then vacuum the living room.",
     [call("feed_pet", grams=[120]),
      call("start_vacuum", rooms=[["living room"]], mode=[N])], "two_tools")
case("en_three_scores", "en", ["get_score", "log_workout"],
     "What are the latest scores of the Lakers, the Bulls and the Knicks?",
     [call("get_score", team=["Lakers", "Los Angeles Lakers"], sport=["basketball", N]),
      call("get_score", team=["Bulls", "Chicago Bulls"], sport=["basketball", N]),
      call("get_score", team=["Knicks", "New York Knicks"], sport=["basketball", N])],
     "same_tool")
case("de_two_words", "de", ["define_word", "search_library"],
     "Was bedeuten die Wörter 'Fernweh' und 'Kummerspeck'?",
     [call("define_word", word=["Fernweh"], language=[N, "de"]),
      call("define_word", word=["Kummerspeck"], language=[N, "de"])], "same_tool")
case("fr_two_stops", "fr", ["next_departures", "pay_parking"],
     "Donne-moi les prochains départs à Châtelet et à Bastille.",
     [call("next_departures", stop=["Châtelet"], line=[N]),
      call("next_departures", stop=["Bastille"], line=[N])], "same_tool")
case("es_print_two", "es", ["print_document", "define_word"],
     "Imprime factura.pdf y contrato.pdf.",
     [call("print_document", file=["factura.pdf"], copies=[N, 1], color=[N]),
      call("print_document", file=["contrato.pdf"], copies=[N, 1], color=[N])], "same_tool")
case("it_recipe_and_scale", "it", ["find_recipe", "scale_recipe"],
     "Cerca una ricetta di risotto e adatta la mia 'torta della nonna' per 8 persone.",
     [call("find_recipe", dish=["risotto"], max_minutes=[N], vegetarian=[N]),
      call("scale_recipe", recipe=["torta della nonna"], servings=[8])], "two_tools")
case("pt_two_cities", "pt", ["air_quality", "next_departures"],
     "Qual é a qualidade do ar em Lisboa e no Porto?",
     [call("air_quality", city=["Lisboa", "Lisbon"]), call("air_quality", city=["Porto"])],
     "same_tool")

# --------------------------------------------------------------------------- no fitting tool
case("en_chat_thanks", "en", ["track_parcel", "pay_parking"],
     "Thanks, that's all for now!", [], "chat")
case("en_joke", "en", ["find_recipe", "get_score"],
     "Tell me a short joke about cats.", [], "chat")
case("en_capital", "en", ["air_quality", "next_departures"],
     "What is the capital of Australia?", [], "knowledge")
case("en_poem", "en", ["define_word", "search_library"],
     "Write a two-line poem about the sea.", [], "chat")
case("en_math", "en", ["split_bill", "log_workout"],
     "What is 17 times 23?", [], "knowledge")
case("en_near_parcel", "en", ["track_parcel", "print_document"],
     "How do tracking numbers of parcels work in general?", [], "near_tool")
case("en_near_recipe", "en", ["find_recipe", "scale_recipe"],
     "Why does bread dough need to rest?", [], "near_tool")
case("en_near_parking", "en", ["pay_parking", "air_quality"],
     "Book me a table for two at an Italian restaurant tonight.", [], "near_tool")
case("en_advice", "en", ["log_workout", "get_score"],
     "Give me three tips for sleeping better.", [], "chat")
case("de_hello", "de", ["feed_pet", "water_garden"],
     "Hallo! Wie geht es dir heute?", [], "chat")
case("de_history", "de", ["search_library", "define_word"],
     "Wer hat die Glühbirne erfunden?", [], "knowledge")
case("de_near_vacuum", "de", ["start_vacuum", "feed_pet"],
     "Wie oft sollte man den Filter eines Staubsaugers wechseln?", [], "near_tool")
case("fr_translate", "fr", ["define_word", "print_document"],
     "Comment dit-on « bonne nuit » en anglais ?", [], "knowledge")
case("fr_weather_smalltalk", "fr", ["air_quality", "get_score"],
     "J'adore le printemps, et toi ?", [], "chat")
case("es_story", "es", ["find_recipe", "split_bill"],
     "Cuéntame una historia corta sobre un dragón.", [], "chat")
case("es_near_court", "es", ["book_court", "log_workout"],
     "¿Cuáles son las reglas básicas del pádel?", [], "near_tool")
case("it_hello", "it", ["get_score", "next_departures"],
     "Ciao, mi aiuti a scegliere un nome per il mio gatto?", [], "chat")
case("pt_fact", "pt", ["air_quality", "track_parcel"],
     "Quantos planetas tem o sistema solar?", [], "knowledge")
case("nl_thanks", "nl", ["renew_loan", "search_library"],
     "Dank je wel, je hebt me echt geholpen.", [], "chat")

# --------------------------------------------------------------------------- the result is in
case("en_after_parcel", "en", ["track_parcel", "refill_prescription"],
     [user("Where is parcel 1Z999AA10123456784?"),
      assistant(use("toolu_cal01", "track_parcel", {"tracking_number": "1Z999AA10123456784"})),
      user(result("toolu_cal01", '{"status": "out for delivery", "eta": "today 16:00"}'))],
     [], "after_result")
case("en_after_score", "en", ["get_score", "log_workout"],
     [user("How did Arsenal play?"),
      assistant(use("toolu_cal02", "get_score", {"team": "Arsenal"})),
      user(result("toolu_cal02", '{"last_match": "Arsenal 2 - 1 Chelsea", "date": "2025-03-05"}'))],
     [], "after_result")
case("de_after_air", "de", ["air_quality", "next_departures"],
     [user("Wie ist die Luft in München?"),
      assistant(use("toolu_cal03", "air_quality", {"city": "München"})),
      user(result("toolu_cal03", '{"aqi": 31, "level": "good"}'))],
     [], "after_result")
case("fr_after_define", "fr", ["define_word", "search_library"],
     [user("Que veut dire « flâner » ?"),
      assistant(use("toolu_cal04", "define_word", {"word": "flâner", "language": "fr"})),
      user(result("toolu_cal04", '{"definition": "se promener sans but, au hasard"}'))],
     [], "after_result")
case("es_after_split", "es", ["split_bill", "find_recipe"],
     [user("Divide 90 euros entre 3."),
      assistant(use("toolu_cal05", "split_bill", {"total": 90, "people": 3})),
      user(result("toolu_cal05", '{"each": 30.0}'))],
     [], "after_result")
case("en_after_then_more", "en", ["track_parcel", "refill_prescription"],
     [user("Where is parcel 1Z999AA10123456784?"),
      assistant(use("toolu_cal06", "track_parcel", {"tracking_number": "1Z999AA10123456784"})),
      user(result("toolu_cal06", '{"status": "delivered", "date": "2025-03-05"}')),
      assistant("Your parcel was delivered yesterday, 5 March."),
      user("Great. Now please refill prescription RX-5520.")],
     [call("refill_prescription", rx_number=["RX-5520"], pickup_day=[N])], "after_result")


def render() -> str:
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
