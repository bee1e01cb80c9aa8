"""whole_phrases: a value the question writes as a piece of a word or a name, written whole."""

from __future__ import annotations

from typing import Any

import pytest

from tooluse.presets.en_bfcl.phrases import values_after_names, whole_phrases


def _schema(**extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"v": {"type": "string", **extra}},
            "required": ["v"]}


@pytest.mark.parametrize(("question", "value", "whole"), [
    # a piece of one word, cut between letters and digits or at a separator
    ("Retrieve all the lawsuit details for case number XYZ123.", "123", "XYZ123"),
    ("Find the user with id U123456 please", "123456", "U123456"),
    ("Get the docket '2022/AL2562' from the court", "AL2562", "2022/AL2562"),
    ("Analyze my fMRI data in ~/data/myfMRI.nii today", "myfMRI.nii", "~/data/myfMRI.nii"),
    # a piece of a capitalised name
    ("When did the Treaty of Tordesillas take place?", "Tordesillas", "Treaty of Tordesillas"),
    ("Find the opening hours of the Metropolitan Museum of Art", "Metropolitan",
     "Metropolitan Museum of Art"),
    ("Get the price of a used Gibson Les Paul guitar", "Gibson", "Gibson Les Paul"),
    ("Show the roster of the LA Lakers", "LA", "LA Lakers"),
    ("What is Albert Einstein's theory?", "Einstein", "Albert Einstein"),  # no 's
    # a piece of a quote
    ("I need to remember to 'go to Goa'", "Goa", "go to Goa"),
    ("I've completed the task 'Submit monthly financial report'. Mark it done.", "Submit",
     "Submit monthly financial report"),
    # a piece of a sentence set apart in bold (a model's answer pasted in)
    ("Sure, here is the answer:\n\n**Logistic regression is not present in the text, "
     "therefore I cannot answer.**", "text",
     "Logistic regression is not present in the text, therefore I cannot answer."),
])
def test_a_piece_is_written_whole(question: str, value: str, whole: str) -> None:
    assert whole_phrases({"v": value}, _schema(), question) == {"v": whole}


@pytest.mark.parametrize(("question", "value"), [
    ("Analyze the sentiment of this review", "en"),  # inside plain letters
    ("What is Van Gogh's most famous painting?", "Van Gogh"),  # a possessive is no part
    ("Compare Apple and Samsung sales", "Apple"),  # not across "and"
    ("Fetch Bitcoin News for me", "Bitcoin"),  # a sentence's first word
    ("Water boils. Boiling Water is hot", "Water"),  # written alone once, in a name once
    ("What is the weather in Paris?", "Paris"),  # already whole
    ("What is the weather in Paris?", "London"),  # not written at all
    ("Find the mass of water under 1 atm", "water"),  # lowercase runs are not grown
    ("'Get the stock price of Apple for 5 days.'", "Apple"),  # a whole request quoted
    ("**Get the stock price of Apple for 5 days.**", "Apple"),  # ... or in bold
    ("The **text** says: read the text", "text"),  # written outside the bold too
    ("List the mandates of user ID U123 that are pending", "U123"),  # a label is no part
    ("Retrieve the analysis for project with UUID SUPERFANCY", "SUPERFANCY"),
])
def test_a_value_stays(question: str, value: str) -> None:
    assert whole_phrases({"v": value}, _schema(), question) == {"v": value}


def test_only_free_strings_grow() -> None:
    question = "Get the roster of the LA Lakers"
    for extra in ({"enum": ["LA", "NY"]}, {"format": "date"}, {"pattern": "^[A-Z]+$"}):
        assert whole_phrases({"v": "LA"}, _schema(**extra), question) == {"v": "LA"}
    integer = {"type": "object", "properties": {"v": {"type": "integer"}}}
    assert whole_phrases({"v": 123}, integer, "case XYZ123") == {"v": 123}
    # Parameters the schema does not describe, and values of other types, are kept.
    assert whole_phrases({"w": "LA", "v": None}, _schema(), question) == {"w": "LA", "v": None}
    assert whole_phrases({"v": "LA"}, None, question) == {"v": "LA"}


def test_a_value_is_not_grown_into_another_parameters_value() -> None:
    schema = {"type": "object", "properties": {"team": {"type": "string"},
                                               "league": {"type": "string"}}}
    question = "Show the next 6 games of Manchester United in the Premier League"
    assert whole_phrases({"team": "Manchester United", "league": "Manchester"}, schema,
                         question) == {"team": "Manchester United", "league": "Manchester"}
    assert whole_phrases({"team": "Manchester", "league": "Premier"}, schema, question) == {
        "team": "Manchester United", "league": "Premier League"}


@pytest.mark.parametrize(("question", "value", "written"), [
    ('Fetch the latest news on "Climate Change" and "AI".', "climate_change", "Climate Change"),
    ("Search for a Chicken Noodle Soup recipe.", "chicken_noodle_soup", "Chicken Noodle Soup"),
    ("Sequences in Homo sapiens and Pan troglodytes?", "pan_troglodytes", "Pan troglodytes"),
    ("Emissions of a plug-in hybrid car", "plug_in_hybrid", "plug-in hybrid"),
])
def test_words_joined_by_underscores_are_written_as_the_question_writes_them(
        question: str, value: str, written: str) -> None:
    assert whole_phrases({"v": value}, _schema(), question) == {"v": written}


@pytest.mark.parametrize(("question", "value", "extra"), [
    ("Train a model on data_random_forest, the random forest data", "data_random_forest",
     {}),  # the question writes the value itself
    ("News on climate change and on Climate Change", "climate_change", {}),  # two writings
    ("Rainfall over the last six months", "six_months",
     {"description": "The time frame, e.g. 'six_months' or 'year'."}),  # asked so
    ("Rainfall over the last six months", "six_months", {"enum": ["six_months", "year"]}),
])
def test_words_joined_by_underscores_stay(question: str, value: str,
                                          extra: dict[str, Any]) -> None:
    assert whole_phrases({"v": value}, _schema(**extra), question) == {"v": value}


def test_a_parameter_named_in_the_description_is_no_example_of_its_values() -> None:
    schema = {"type": "object", "properties": {
        "topic": {"type": "string", "description": "The topic; see max_results for how many."},
        "max_results": {"type": "integer"}}}
    assert whole_phrases({"topic": "climate_change"}, schema, "News on Climate Change") == {
        "topic": "Climate Change"}


def _named(name: str) -> dict[str, Any]:
    return {"type": "object", "properties": {name: {"type": "string"},
                                             "type": {"type": "string"}},
            "required": [name]}


@pytest.mark.parametrize(("name", "question", "value", "whole"), [
    ("content", "add todo with content go to sleep at 9 pm", "9 pm", "go to sleep at 9 pm"),
    ("content", "delete todo with content - go to gym", "gym", "go to gym"),
    ("content", "can you create todo with the following words verbatim: go for shopping at "
     "9 pm", "9 pm", "go for shopping at 9 pm"),
    ("command", "shutdown the pc, using the exact command shutdown /s /t 0", "/s/t 0",
     "shutdown /s /t 0"),
    ("command", "disconnect wifi, using the command netsh wlan disconnect", "disconnect",
     "netsh wlan disconnect"),
    ("command", "open the calculator using the command called start calc. Thanks!", "calc",
     "start calc"),
    ("meta_title", "Set the meta title: Sleep and Work\nthen publish", "Work",
     "Sleep and Work"),
])
def test_the_rest_after_the_parameters_name_is_written_whole(
        name: str, question: str, value: str, whole: str) -> None:
    assert whole_phrases({name: value}, _named(name), question) == {name: whole}


@pytest.mark.parametrize(("name", "question", "value"), [
    # The model's value is no tail of what follows the name.
    ("content", "add todo with content go to sleep at 9 pm", "sleep"),
    ("location", "weather for location Boston in celsius", "Boston"),
    # A rest that starts with a function word, or holds a quote (the quote rule's).
    ("format", "give me the year in the format of YYYY", "YYYY"),
    ("event", "the event known as the Battle of Gettysburg", "Battle of Gettysburg"),
    ("target", "a target variable 'Purchase_Amount' please", "Purchase_Amount"),
    # Two different rests after the name: which one is meant is not clear.
    ("command", "run the command start calc, or the command open calc", "calc"),
    # The whole rest, already.
    ("command", "using the command netsh wlan disconnect", "netsh wlan disconnect"),
])
def test_a_value_after_the_parameters_name_stays(name: str, question: str,
                                                 value: str) -> None:
    assert whole_phrases({name: value}, _named(name), question) == {name: value}


@pytest.mark.parametrize(("question", "value", "whole"), [
    # BFCL live_simple_141-94-0, _159-95-16, _167-99-1, _153-95-10, _152-95-9, _172-99-6.
    ("check whether the docker is installed using docker --version", "docker",
     "docker --version"),
    ("set a timer for 10 seconds using the timeout command. You should use timeout 10.",
     "timeout", "timeout 10"),
    ('is vs code running, using the command tasklist /FI "IMAGENAME eq Code.exe"', "code",
     'tasklist /FI "IMAGENAME eq Code.exe"'),
    ('remove shortcut of putty from desktop, using the instruction del '
     '"%userprofile%\\Desktop\\putty.lnk"', "putty",
     'del "%userprofile%\\Desktop\\putty.lnk"'),
    ("list files in d drive. This can be achieved through dir D:\\ && echo testing.txt.",
     "dir", "dir D:\\ && echo testing.txt"),
    # The line ends before what it is for.
    ("is docker running, please use docker ps to find out", "docker", "docker ps"),
])
def test_the_command_line_the_question_says_to_use_is_written_whole(
        question: str, value: str, whole: str) -> None:
    assert whole_phrases({"command": value}, _named("command"), question) == {"command": whole}


@pytest.mark.parametrize(("name", "question", "value"), [
    # Alternatives: which one is meant is not for this rule to say.
    ("command", "what is the date, using the date or echo command", "date"),
    # Not a word of the line, or the whole line already.
    ("command", "open camera, using the start microsoft.windows.camera: command", "open camera"),
    ("command", "open calculator app using the command called start calc", "start calc"),
    # Not a command parameter: "using" says how, not what to run.
    ("method", "integrate x^3 from -2 to 3 using simpson rule", "simpson"),
])
def test_a_command_value_stays(name: str, question: str, value: str) -> None:
    assert whole_phrases({name: value}, _named(name), question) == {name: value}


MOVIE_SEARCH = {"type": "object", "required": [], "properties": {
    "directed_by": {"type": "string"}, "cast": {"type": "string"},
    "genre": {"type": "string", "enum": ["Comedy", "Drama"]}}}


@pytest.mark.parametrize(("arguments", "question", "placed"), [
    # The name moves from the first free parameter to the one the question names.
    ({"cast": "Edgar Wright", "genre": "Comedy"}, "Find a comedy movie directed by Edgar "
     "Wright?", {"genre": "Comedy", "directed_by": "Edgar Wright"}),
    # A parameter the call left out is given it.
    ({"genre": "Comedy"}, "Find me a movie directed by Kirill Mikhanovsky, a comedy",
     {"genre": "Comedy", "directed_by": "Kirill Mikhanovsky"}),
    # A piece of the name the call holds grows into it, and the other copy goes.
    ({"cast": "Nitesh Tiwari", "directed_by": "Nitesh"}, "A Comic, directed by Nitesh "
     "Tiwari?", {"directed_by": "Nitesh Tiwari"}),
])
def test_a_name_written_after_a_parameters_name_is_that_parameters(
        arguments: dict[str, Any], question: str, placed: dict[str, Any]) -> None:
    assert values_after_names(arguments, MOVIE_SEARCH, question) == placed


@pytest.mark.parametrize(("arguments", "question"), [
    # The call gives another value the question writes: left as it is.
    ({"directed_by": "Tim Burton", "cast": "Johnny Depp"}, "Movies directed by Tim Burton "
     "or directed by Steven Spielberg with Johnny Depp"),
    ({"directed_by": "Greta Gerwig"}, "Greta Gerwig films, not directed by Noah Baumbach"),
    # No capitalised name after the words, or a one-word parameter name ("cast Tom Hanks").
    ({"cast": "Tom Hanks"}, "something directed by someone famous with cast Tom Hanks"),
    ({}, "A movie directed by nobody I know"),
    # Not after a negation.
    ({}, "Any comedy not directed by Noah Baumbach"),
])
def test_a_name_is_not_moved_where_the_question_leaves_doubt(
        arguments: dict[str, Any], question: str) -> None:
    assert values_after_names(arguments, MOVIE_SEARCH, question) == arguments


def test_a_required_parameter_keeps_its_value() -> None:
    schema = {**MOVIE_SEARCH, "required": ["cast"]}
    assert values_after_names({"cast": "Edgar Wright"}, schema,
                              "a movie directed by Edgar Wright") == {
        "cast": "Edgar Wright", "directed_by": "Edgar Wright"}
    assert values_after_names({"x": 1}, None, "directed by Edgar Wright") == {"x": 1}
