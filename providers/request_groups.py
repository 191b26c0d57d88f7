"""Request groups: what a client asks of providers, its query-string language, and names to ids.

This is the one home of three rules every edge shares (Placement keeps its
equivalent in a small library module, apart from its handlers and objects):

* :class:`RequestGroup` (resources, traits, aggregates, ``in_tree``, by name
  and uuid) and :class:`CandidateRequest` (groups keyed by suffix plus the
  request-wide options of ``GET /allocation_candidates``);
* the query-string language (``resources``, ``required``, ``member_of``,
  ``in_tree``, granular suffixes, ``root_required``, ``same_subtree``, per
  microversion): :func:`parse_group`, :func:`parse_groups` and
  :func:`parse_candidate_request`, raising InvalidRequest with Placement's words.
  The provider list, the allocation candidates endpoint and the dashboard's
  "try a request" form (which writes its fields as a query string) all parse
  with them;
* resolving class and trait names to ids: :func:`resolve_names`, two queries
  whatever the number of groups, raising :class:`UnknownResourceClass` /
  :class:`UnknownTrait`.

Schemas (which keys an endpoint accepts at a microversion) stay with the
views; this module parses values already schema-checked.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from placementsite.core import uuids
from placementsite.core.exceptions import (
    ILLEGAL_DUPLICATE_QUERYPARAM,
    QUERYPARAM_BAD_VALUE,
    QUERYPARAM_MISSING_VALUE,
    InvalidRequest,
)

from .models import ResourceClass, Trait

# --- the shapes -------------------------------------------------------------


@dataclass(frozen=True)
class RequestGroup:
    """What a provider must offer, by name and uuid, as a client asks it."""

    resources: dict = field(default_factory=dict)  # class name -> amount
    required_traits: tuple = ()  # of frozensets: each needs one of its traits
    forbidden_traits: frozenset = frozenset()
    member_of: tuple = ()  # of frozensets of aggregate uuids: each needs one
    forbidden_aggregates: frozenset = frozenset()
    in_tree: str | None = None  # a provider uuid: only providers of its tree

    def asks_something(self):
        """False for the empty group (which nothing needs to judge)."""
        return self != RequestGroup()


@dataclass(frozen=True)
class CandidateRequest:
    """Everything ``GET /allocation_candidates`` asks, by name and uuid."""

    groups: dict  # suffix -> RequestGroup; "" is the unsuffixed group
    group_policy: str | None = None  # "none" | "isolate"
    limit: int | None = None
    root_required: tuple = ()  # of frozensets of trait names (each needs one)
    root_forbidden: frozenset = frozenset()
    same_subtree: tuple = ()  # of tuples of suffixes
    # From 1.34 two candidates with the same allocations but different
    # mappings are different answers; before, they are one.
    distinct_mappings: bool = False
    # Before 1.29 a client knows nothing of trees: no candidate may use two providers of one
    # tree, and the summaries list only the providers the candidates use.
    nested_aware: bool = True
    # The scheduler's own narrowing, never from a query string: only the trees of these root
    # ids (a boot's or a move's target host), read as windows of those roots alone.
    roots: frozenset | None = None


@dataclass(frozen=True)
class ResolvedGroup:
    """A RequestGroup with classes and traits as ids (see :func:`resolve_names`)."""

    group: RequestGroup
    resources: dict  # resource class id -> amount
    class_names: dict  # resource class id -> name
    required_traits: tuple  # of frozensets of trait ids
    forbidden_traits: frozenset  # of trait ids
    trait_names: dict  # trait id -> name


# --- names to ids -----------------------------------------------------------


class UnknownResourceClass(InvalidRequest):
    """A request names resource classes that do not exist: a 400 with these words wherever
    the caller does not put them in its own (Placement's messages differ by endpoint)."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = sorted(names)
        self.name = ", ".join(self.names)
        super().__init__(f"No such resource class {self.name}.")


class UnknownTrait(InvalidRequest):
    """A request names traits that do not exist (a 400, as :class:`UnknownResourceClass`)."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = sorted(names)
        super().__init__(f"No such trait(s): {', '.join(self.names)}.")


def _trait_names_of(group):
    return set().union(*group.required_traits, group.forbidden_traits)


@dataclass(frozen=True)
class Names:
    """Ids of the class and trait names of some groups, looked up once."""

    class_ids: dict  # name -> id
    trait_ids: dict  # name -> id

    def traits(self, names):
        return frozenset(self.trait_ids[name] for name in names)

    def resolve(self, group):
        """``group`` as a :class:`ResolvedGroup` (its names must have been looked up)."""
        class_ids, trait_ids = self.class_ids, self.trait_ids
        return ResolvedGroup(
            group=group,
            resources={class_ids[name]: amount for name, amount in group.resources.items()},
            class_names={class_ids[name]: name for name in group.resources},
            required_traits=tuple(self.traits(any_of) for any_of in group.required_traits),
            forbidden_traits=self.traits(group.forbidden_traits),
            trait_names={trait_ids[name]: name for name in _trait_names_of(group)},
        )


def names_wanted(groups, *, traits=()):
    """``(class names, trait names)`` of ``groups`` (and the extra ``traits``), as sets."""
    class_names = {name for group in groups for name in group.resources}
    trait_names = set(traits).union(*(_trait_names_of(group) for group in groups))
    return class_names, trait_names


def names_found(class_names, trait_names, class_ids, trait_ids):
    """The :class:`Names` of names looked up (``{name: id}`` of those that exist, however the
    caller read them). Raises UnknownResourceClass first, then UnknownTrait, naming every
    unknown name."""
    missing = class_names - set(class_ids)
    if missing:
        raise UnknownResourceClass(missing)
    missing = trait_names - set(trait_ids)
    if missing:
        raise UnknownTrait(missing)
    return Names(class_ids=class_ids, trait_ids=trait_ids)


def resolve_names(groups, *, traits=()):
    """Look up every class and trait name of ``groups`` (and the extra ``traits``).

    Two queries at most (see :func:`names_found` for the errors).
    """
    class_names, trait_names = names_wanted(groups, traits=traits)
    class_ids = {}
    if class_names:
        class_ids = dict(
            ResourceClass.objects.filter(name__in=sorted(class_names)).values_list("name", "id")
        )
        names_found(class_names, set(), class_ids, {})  # unknown classes first, unqueried
    trait_ids = {}
    if trait_names:
        trait_ids = dict(
            Trait.objects.filter(name__in=sorted(trait_names)).values_list("name", "id")
        )
    return names_found(class_names, trait_names, class_ids, trait_ids)


def resolve(group):
    """One group as a :class:`ResolvedGroup`."""
    return resolve_names([group]).resolve(group)


def resolve_groups(groups):
    """``{key: RequestGroup}`` -> ``{key: ResolvedGroup}``, in two queries."""
    names = resolve_names(groups.values())
    return {key: names.resolve(group) for key, group in groups.items()}


# --- the query-string language ---------------------------------------------

RESOURCES_FORM = "?resources=VCPU:2,MEMORY_MB:1024"
GROUP_PREFIXES = ("resources", "required", "member_of", "in_tree")
NUMBERED_SUFFIX = r"[1-9][0-9]*"
STRING_SUFFIX = r"[a-zA-Z0-9_-]{1,64}"


def parse_resources(value):
    """``VCPU:2,MEMORY_MB:1024`` -> ``{"VCPU": 2, "MEMORY_MB": 1024}``."""
    if value.strip() == "":
        raise InvalidRequest(
            "Badly formed resources parameter. Expected resources query string "
            f"parameter in form: {RESOURCES_FORM}. Got: empty string."
        )
    resources = {}
    for item in value.split(","):
        parts = item.split(":")
        if len(parts) != 2:
            raise InvalidRequest(
                "Badly formed resources parameter. Expected resources query string "
                f"parameter in form: {RESOURCES_FORM}. Got: {item}."
            )
        name, amount_text = parts
        try:
            amount = int(amount_text)
        except ValueError:
            raise InvalidRequest(
                f"Requested resource {name} expected positive integer amount. Got: {amount_text}."
            ) from None
        if amount < 1:
            raise InvalidRequest(f"Requested resource {name} requires amount >= 1. Got: {amount}.")
        resources[name] = amount
    return resources


def _parse_one_required(value, allow_forbidden, allow_any):
    """One ``required`` value -> (list of any-of sets, set of forbidden names)."""
    if value.startswith("in:"):
        return _parse_any_of_required(value, allow_any)
    return _parse_all_of_required(value, allow_forbidden)


def _parse_any_of_required(value, allow_any):
    """An ``in:A,B`` value (1.39): ``([{A, B}], set())``, one set of which any will do."""
    if not allow_any:
        raise InvalidRequest(
            "Invalid query string parameters: The format "
            "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. "
            f"Got: {value}"
        )
    any_of = {name.strip() for name in value[3:].split(",")}
    if not all(any_of):
        raise InvalidRequest(
            "Invalid query string parameters: Expected 'required' parameter value of "
            f"the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: {value}"
        )
    if any(name.startswith("!") for name in any_of):
        raise InvalidRequest(
            "Invalid query string parameters: The format "
            "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden traits. "
            f"Got: {value}"
        )
    return [frozenset(any_of)], set()


def _parse_all_of_required(value, allow_forbidden):
    """An ``A,!B`` value: ``([{A}], {B})``, every name needed, ``!`` names forbidden (1.22)."""
    names = [name.strip() for name in value.split(",")]
    # Placement strips every leading "!": "!!FOO" forbids FOO.
    forbidden = {name.lstrip("!") for name in names if name.startswith("!")}
    form = "HW_CPU_X86_VMX,!CUSTOM_MAGIC" if allow_forbidden else "HW_CPU_X86_VMX,CUSTOM_MAGIC"
    if not all(names) or not all(forbidden):
        raise InvalidRequest(
            "Invalid query string parameters: Expected 'required' parameter value of "
            f"the form: {form}. Got an empty trait in: {value}"
        )
    if forbidden and not allow_forbidden:
        raise InvalidRequest(
            "Invalid query string parameters: Expected 'required' parameter value of "
            f"the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: {value}"
        )
    required = [frozenset([name]) for name in names if not name.startswith("!")]
    return required, forbidden


def parse_required(query, version, suffix=""):
    """``required`` (1.18): (list of any-of trait sets, all needed; forbidden set).

    ``!TRAIT`` forbids from 1.22; ``in:A,B`` (any of) and repeating the
    parameter (all of them) from 1.39; before 1.39 only the last value counts.
    """
    values = query.getlist("required" + suffix)
    allow_any = version >= (1, 39)
    if not allow_any:
        values = values[-1:]
    required, forbidden = [], set()
    for value in values:
        any_of, not_wanted = _parse_one_required(value, version >= (1, 22), allow_any)
        required.extend(any_of)
        forbidden |= not_wanted
    return required, frozenset(forbidden)


def _parse_one_member_of(value):
    """One ``member_of`` value -> (set of uuids one of which is needed, forbidden set)."""
    if "," in value and not value.startswith(("in:", "!in:")):
        raise InvalidRequest(
            "Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' "
            f"keyword using the valid microversion. Got: {value}"
        )
    required, forbidden = [], []
    if value.startswith("!in:"):
        forbidden = value[4:].split(",")
    elif value.startswith("!"):
        forbidden = [value[1:]]
    elif value.startswith("in:"):
        required = value[3:].split(",")
    else:
        required = [value]
    normalized = {}
    for text in required + forbidden:
        found = uuids.parse(text)
        if found is None:
            raise InvalidRequest(
                "Invalid query string parameters: Expected 'member_of' parameter to "
                f"contain valid UUID(s). Got: {text}"
            )
        normalized[text] = found
    return (
        frozenset(normalized[t] for t in required),
        frozenset(normalized[t] for t in forbidden),
    )


def parse_member_of(query, version, suffix=""):
    """``member_of`` (1.3): (list of any-of aggregate sets, all needed; forbidden set).

    Repeating the parameter is allowed from 1.24; ``!uuid`` and ``!in:`` from 1.32.
    """
    key = "member_of" + suffix
    values = query.getlist(key)
    if version < (1, 24) and len(values) > 1:
        raise InvalidRequest(f"Multiple {key} parameters are not supported")
    required, forbidden = [], set()
    for value in values:
        any_of, not_wanted = _parse_one_member_of(value)
        if any_of:
            required.append(any_of)
        if not_wanted:
            if version < (1, 32):
                raise InvalidRequest(
                    f"Forbidden {key} parameters are not supported in the specified microversion"
                )
            forbidden |= not_wanted
    return required, frozenset(forbidden)


def parse_in_tree(query, suffix=""):
    """``in_tree<suffix>``: the provider uuid."""
    key = "in_tree" + suffix
    if key not in query:
        return None
    found = uuids.parse(query[key])
    if found is None:
        raise InvalidRequest(
            "Invalid query string parameters: Expected 'in_tree' parameter to be a format "
            f"of uuid. Got: {query[key]}"
        )
    return found


def parse_group(query, version, suffix=""):
    """The :class:`RequestGroup` named by ``resources<suffix>``, ``required<suffix>``,
    ``member_of<suffix>`` and ``in_tree<suffix>`` of ``query`` (a QueryDict)."""
    required, forbidden_traits = [], frozenset()
    if "required" + suffix in query:
        required, forbidden_traits = parse_required(query, version, suffix)
    member_of, forbidden_aggregates = [], frozenset()
    if "member_of" + suffix in query:
        member_of, forbidden_aggregates = parse_member_of(query, version, suffix)
    resources = {}
    if "resources" + suffix in query:
        resources = parse_resources(query["resources" + suffix])
    return RequestGroup(
        resources=resources,
        required_traits=tuple(required),
        forbidden_traits=forbidden_traits,
        member_of=tuple(member_of),
        forbidden_aggregates=forbidden_aggregates,
        in_tree=parse_in_tree(query, suffix),
    )


def suffix_pattern(version):
    """The regex of a granular group suffix: numbers (1.25), any short string (1.33)."""
    if version >= (1, 33):
        return STRING_SUFFIX
    if version >= (1, 25):
        return NUMBERED_SUFFIX
    return None


def group_key_regex(version):
    """``(prefix, suffix)`` from a query key such as ``resources_NET1``."""
    suffix = suffix_pattern(version)
    tail = f"({suffix})?" if suffix else "()"
    return re.compile(rf"^({'|'.join(GROUP_PREFIXES)}){tail}$")


def group_suffixes(query, version):
    """The group suffixes ``query``'s keys use, in sorted order (``""``: unsuffixed)."""
    regex = group_key_regex(version)
    found = set()
    for key in query:
        match = regex.match(key)
        if match:
            found.add(match.group(2) or "")
    return sorted(found)


def parse_groups(query, version):
    """``{suffix: RequestGroup}`` for every group ``query`` names, in suffix order."""
    return {
        suffix: parse_group(query, version, suffix) for suffix in group_suffixes(query, version)
    }


def parse_root_required(query):
    """``root_required`` (1.35), given once: (list of one-trait sets, forbidden set)."""
    values = query.getlist("root_required")
    if len(values) > 1:
        raise InvalidRequest(
            "Query parameter 'root_required' may be specified only once.",
            code=ILLEGAL_DUPLICATE_QUERYPARAM,
        )
    value = values[0]
    names = [name.strip() for name in value.split(",")]
    forbidden = {name[1:] for name in names if name.startswith("!")}
    if not all(names) or not all(forbidden):
        raise InvalidRequest(
            "Invalid query string parameters: Expected 'root_required' parameter value of "
            f"the form: HW_CPU_X86_VMX,!CUSTOM_MAGIC. Got an empty trait in: {value}"
        )
    required = [frozenset([name]) for name in names if not name.startswith("!")]
    conflicts = sorted(name for (name,) in required if name in forbidden)
    if conflicts:
        raise InvalidRequest(
            "Conflicting required and forbidden traits found in root_required: "
            + ", ".join(conflicts),
            code=QUERYPARAM_BAD_VALUE,
        )
    return required, frozenset(forbidden)


def parse_same_subtree(query):
    """``same_subtree`` (1.36), repeatable: a list of tuples of group suffixes."""
    found = []
    for value in query.getlist("same_subtree"):
        suffixes = tuple(dict.fromkeys(part.strip() for part in value.split(",")))
        if "" in suffixes:
            raise InvalidRequest(
                "Empty string (unsuffixed group) can not be specified in `same_subtree` ",
                code=QUERYPARAM_BAD_VALUE,
            )
        found.append(suffixes)
    return found


def _names(suffixes):
    """A list of suffixes as Placement prints one (a Python list)."""
    return "[" + ", ".join(repr(s) for s in suffixes) + "]"


def _check_groups_1_36(groups, same_subtree):
    """From 1.36 a suffixed group may have no resources if ``same_subtree`` names it."""
    resourceless = sorted(s for s, g in groups.items() if not g.resources)
    in_subtree = {s for suffixes in same_subtree for s in suffixes}
    if len(resourceless) == len(groups):
        raise InvalidRequest(
            "There must be at least one resources or resources[$S] parameter.",
            code=QUERYPARAM_MISSING_VALUE,
        )
    bad = [s for s in resourceless if s not in in_subtree]
    if bad:
        raise InvalidRequest(
            "Resourceless suffixed group request should be specified in `same_subtree` "
            f"query param: bad group(s) - {_names(bad)}.",
            code=QUERYPARAM_BAD_VALUE,
        )
    unknown = [s for suffixes in same_subtree for s in suffixes if s not in groups]
    if unknown:
        raise InvalidRequest(
            f"Real suffixes should be specified in `same_subtree`: {_names(unknown)} not "
            f"found in {_names(groups)}.",
            code=QUERYPARAM_BAD_VALUE,
        )


def _check_groups_before_1_36(groups):
    """Before 1.36 every group needs resources; traits or aggregates alone are orphans."""
    orphans = [f"required{s}" for s, g in groups.items() if g.required_traits and not g.resources]
    if orphans:
        raise InvalidRequest(
            "All traits parameters must be associated with resources.  Found the following "
            f"orphaned traits keys: {', '.join(orphans)}"
        )
    orphans = [
        f"member_of{s}"
        for s, g in groups.items()
        if not g.resources and (g.member_of or g.forbidden_aggregates)
    ]
    if orphans:
        raise InvalidRequest(
            "All member_of parameters must be associated with resources. Found the following "
            f"orphaned member_of keys: {', '.join(orphans)}"
        )
    if not all(g.resources for g in groups.values()):
        raise InvalidRequest("All request groups must specify resources.")
    if not groups:
        raise InvalidRequest(
            "At least one request group (`resources` or `resources{$S}`) is required."
        )


def _check_forbidden_conflicts(groups):
    """A group may not require (every one of an any-of set of) traits it forbids."""
    conflicts = sorted(
        f"required{suffix}: ({', '.join(sorted(any_of))})"
        for suffix, group in groups.items()
        for any_of in group.required_traits
        if any_of <= group.forbidden_traits
    )
    if conflicts:
        raise InvalidRequest(
            "Conflicting required and forbidden traits found in the following traits keys: "
            + ", ".join(conflicts)
        )


def check_candidate_groups(groups, version, same_subtree):
    """Placement's rules about which groups of a candidates request may exist together."""
    if version >= (1, 36):
        _check_groups_1_36(groups, same_subtree)
    else:
        _check_groups_before_1_36(groups)
    if version >= (1, 22):
        _check_forbidden_conflicts(groups)


def parse_candidate_request(query, version):
    """The :class:`CandidateRequest` of a (schema-checked) allocation candidates query.

    In Placement's order: the request-wide parameters, then the groups and their rules.
    """
    root_required, root_forbidden = [], frozenset()
    if "root_required" in query:
        root_required, root_forbidden = parse_root_required(query)
    same_subtree = parse_same_subtree(query) if "same_subtree" in query else []
    groups = parse_groups(query, version)
    check_candidate_groups(groups, version, same_subtree)
    group_policy = query.getlist("group_policy", [None])[0]
    if version >= (1, 25) and group_policy is None and len([s for s in groups if s]) > 1:
        raise InvalidRequest(
            'The "group_policy" parameter is required when specifying more than one '
            '"resources{N}" parameter.'
        )
    return CandidateRequest(
        groups=groups,
        group_policy=group_policy,
        limit=int(query.getlist("limit")[0]) if "limit" in query else None,
        root_required=tuple(root_required),
        root_forbidden=root_forbidden,
        same_subtree=tuple(same_subtree),
        distinct_mappings=version >= (1, 34),
        nested_aware=version >= (1, 29),
    )
