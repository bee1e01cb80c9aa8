"""Codes a parameter's description lists: read from the description, written where the
question names one of them."""

from __future__ import annotations

from typing import Any

from tooluse.messages import Message, Request, ToolSpec, ToolUseBlock
from tooluse.presets.en_bfcl.call_edits import call_adjuster
from tooluse.presets.en_bfcl.codes import code_table, described_codes

SERVICE = ("The ID of the service type. For example, '1' represents a cleaning service, "
           "'2' represents an ironing service, and '3' represents a comprehensive cleaning "
           "service.")
PROVINCE = "The province. For example, 1 corresponds to Bangkok, 2 to Chiang Mai, and 3 to Chonburi."
SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["service_id"],
    "properties": {
        "service_id": {"type": "integer", "description": SERVICE},
        "province_id": {"type": "integer", "description": PROVINCE},
        "rating": {"type": "number", "description": "The minimum rating, 1 to 5."},
    },
}


def test_a_table_is_read_from_the_usual_phrasings() -> None:
    assert code_table(SERVICE) == [("1", "cleaning service"), ("2", "ironing service"),
                                   ("3", "comprehensive cleaning service")]
    assert code_table(PROVINCE) == [("1", "Bangkok"), ("2", "Chiang Mai"), ("3", "Chonburi")]
    assert code_table("Sex of the patient: 'M' for male, 'F' for female.") == [
        ("M", "male"), ("F", "female")]
    assert code_table("e.g., 1 for cleaning, 2 for ironing, 3 for extensive cleaning.") == [
        ("1", "cleaning"), ("2", "ironing"), ("3", "extensive cleaning")]


def test_one_code_or_a_range_is_no_table() -> None:
    assert code_table("The number of rooms, 1 for a single.") == []
    assert code_table("The level of compression to apply (from 0 to 9). Default is 5.") == []
    assert code_table("Intensity of the shade on a scale of 1-10.") == []


def test_the_code_of_the_thing_named_is_written_and_a_missing_one_added() -> None:
    question = "Help find a housekeeper who provides ironing services in Chonburi Province."
    assert described_codes({"service_id": 12345}, SCHEMA, question) == {
        "service_id": 2, "province_id": 3}


def test_the_entry_saying_most_wins_and_a_tie_writes_nothing() -> None:
    question = "I need a comprehensive cleaning in Bangkok"
    assert described_codes({"service_id": 1}, SCHEMA, question) == {
        "service_id": 3, "province_id": 1}
    # Words every entry has ("service") name none of them.
    assert described_codes({"service_id": 7}, SCHEMA, "Which service is open?") == {
        "service_id": 7}
    # Two provinces named: which one is meant is not for this rule to say.
    assert described_codes({"service_id": 1}, SCHEMA, "cleaning in Bangkok or Chonburi") == {
        "service_id": 1}


def test_string_codes_and_enums() -> None:
    schema = {"type": "object", "properties": {
        "sex": {"type": "string", "description": "'M' for male, 'F' for female."},
        "unit": {"type": "string", "enum": ["m", "cm"],
                 "description": "'m' for meters, 'cm' for centimeters."}}}
    assert described_codes({"sex": "female", "unit": "m"}, schema,
                           "A female patient, 170 centimeters tall") == {"sex": "F", "unit": "cm"}
    # An enum's member only: a code the enum does not hold is not written.
    narrow = {"type": "object", "properties": {
        "unit": {"type": "string", "enum": ["m"],
                 "description": "'m' for meters, 'cm' for centimeters."}}}
    assert described_codes({"unit": "m"}, narrow, "170 centimeters") == {"unit": "m"}


def test_an_enum_of_codes_its_description_explains() -> None:
    # BFCL live_simple_178-103-1: the enum holds the codes, the description says what each is.
    schema = {"type": "object", "required": ["service_id"], "properties": {
        "service_id": {"type": "integer", "enum": [1, 2], "description": (
            "The unique identifier of the service. For example, '1' represents cleaning "
            "service, and '2' represents ironing service.")}}}
    assert described_codes({"service_id": 1}, schema,
                           "Help find a housekeeper who provides ironing services.") == {
        "service_id": 2}


def test_the_call_edit_keeps_a_code_only_if_the_call_validates() -> None:
    narrow = {**SCHEMA, "properties": {**SCHEMA["properties"], "province_id": {
        "type": "integer", "maximum": 2, "description": PROVINCE}}}
    tool = ToolSpec(name="get_service_providers", description="Find providers.",
                    input_schema=narrow)
    request = Request(messages=[Message(role="user", content="ironing services in Chonburi")], tools=[tool])
    block = ToolUseBlock(id="toolu_1", name=tool.name, input={"service_id": 9})
    adjust = call_adjuster(request, optional=False, percent=False, codes=True)
    # Chonburi is code 3, which this schema refuses: the whole edit is not kept.
    assert adjust(block)[0].input == {"service_id": 9}
    tool = tool.model_copy(update={"input_schema": SCHEMA})
    request = request.model_copy(update={"tools": [tool]})
    adjust = call_adjuster(request, optional=False, percent=False, codes=True)
    assert adjust(block)[0].input == {"service_id": 2, "province_id": 3}
    off = call_adjuster(request, optional=False, percent=False, codes=False)
    assert off(block)[0].input == {"service_id": 9}
