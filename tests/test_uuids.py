"""placementsite.core.uuids: which text names a uuid, leniently (Placement's is_uuid_like) or only in
its canonical dashed form."""

import uuid

import pytest

from placementsite.core import uuids

CANONICAL = "5c1c9b2a-8f6e-4c1d-9a3b-0e2f4d6a8b10"
HEX = CANONICAL.replace("-", "")

LENIENT_FORMS = {
    "canonical": CANONICAL,
    "upper case": CANONICAL.upper(),
    "mixed case": "5C1c9B2a-8F6e-4C1d-9A3b-0E2f4D6a8B10",
    "no dashes": HEX,
    "no dashes, upper case": HEX.upper(),
    "dashes elsewhere": "5c1c-9b2a-8f6e-4c1d-9a3b-0e2f-4d6a-8b10",
    "braces": "{" + CANONICAL + "}",
    "urn": "urn:uuid:" + CANONICAL,
    "upper-case urn": "URN:UUID:" + CANONICAL.upper(),
    "uuid prefix": "uuid:" + CANONICAL,
    "surrounding blanks": f"  {CANONICAL}\n",
}

NOT_UUIDS = {
    "empty": "",
    "blank": "   ",
    "word": "not-a-uuid",
    "one digit short": CANONICAL[:-1],
    "one digit long": CANONICAL + "0",
    "not hex": CANONICAL[:-1] + "g",
    "prefix only": "urn:uuid:",
    "inner blank": CANONICAL[:18] + " " + CANONICAL[19:],
}


@pytest.mark.parametrize("text", LENIENT_FORMS.values(), ids=LENIENT_FORMS.keys())
def test_lenient_parse_accepts_and_canonicalises(text):
    assert uuids.parse(text) == CANONICAL
    assert uuids.is_uuid_like(text)


@pytest.mark.parametrize("text", NOT_UUIDS.values(), ids=NOT_UUIDS.keys())
def test_lenient_parse_refuses_what_names_no_uuid(text):
    assert uuids.parse(text) is None
    assert not uuids.is_uuid_like(text)


def test_a_uuid_object_is_its_canonical_text():
    assert uuids.parse(uuid.UUID(CANONICAL)) == CANONICAL


@pytest.mark.parametrize("value", [None, 5, b"5c1c9b2a8f6e4c1d9a3b0e2f4d6a8b10", ["x"]])
def test_other_types_name_no_uuid(value):
    assert uuids.parse(value) is None
    assert uuids.parse_strict(value) is None


@pytest.mark.parametrize(
    "text", [CANONICAL, CANONICAL.upper(), "5C1c9B2a-8F6e-4C1d-9A3b-0E2f4D6a8B10"]
)
def test_strict_parse_takes_the_dashed_form_in_any_case(text):
    assert uuids.parse_strict(text) == CANONICAL


@pytest.mark.parametrize(
    "name",
    [name for name in LENIENT_FORMS if name not in ("canonical", "upper case", "mixed case")],
)
def test_strict_parse_refuses_every_other_lenient_form(name):
    assert uuids.parse_strict(LENIENT_FORMS[name]) is None


@pytest.mark.parametrize("text", NOT_UUIDS.values(), ids=NOT_UUIDS.keys())
def test_strict_parse_refuses_what_names_no_uuid(text):
    assert uuids.parse_strict(text) is None
