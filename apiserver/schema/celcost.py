"""The cost of a CEL rule, estimated as kube-apiserver estimates it (cel-go's checker/cost.go with kube's
library costs, k8s.io/apiserver/pkg/cel/library/cost.go, and its schema size bounds).

A cost is cel-go's abstract unit (about 50-100 ns of Go CPU each). The estimate walks the rule's AST
(:mod:`apiserver.schema.celparse`) with the sizes of the strings, lists and maps it reaches, asked of a
:class:`Sizes` by the path from ``self`` (``spec.items.@items.name``). Two kinds of sizes:

* :class:`DeclaredSizes`: the schema's bounds (``maxLength`` times 4, ``maxItems``, ``maxProperties``), or,
  where there is none, kube's worst case from the 3 MiB request limit and the smallest serialized item
  (k8s.io/apiserver/pkg/cel/common/schemas.go ``SchemaDeclType``). This is the static estimate kube checks
  when a CRD is written (``StaticEstimatedCostLimit``) and that generation checks here.
* the actual sizes of the object being validated (:mod:`apiserver.schema.celbudget`): the same formulas then
  bound what one evaluation can cost, which is how the per-request budget is kept without an engine that
  meters itself.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final, Protocol

from apiserver.schema.celformat import MAX_REGEX_SIZES
from apiserver.schema.celnames import escape
from apiserver.schema.celparse import (
    Call,
    Comprehension,
    CreateList,
    CreateMap,
    Expr,
    Ident,
    Literal,
    Select,
)
from apiserver.schema.structural import MISSING, Schema

__all__ = [
    "PER_CALL_LIMIT",
    "RUNTIME_BUDGET",
    "STATIC_CRD_LIMIT",
    "STATIC_RULE_LIMIT",
    "UNKNOWN",
    "DeclType",
    "DeclaredSizes",
    "Range",
    "Sizes",
    "cost_error",
    "decl_type",
    "estimate",
    "max_cardinality",
    "result_kind",
    "saturating_product",
    "walk",
]

# k8s.io/apiserver/pkg/apis/cel/config.go and apiextensions validation.go
PER_CALL_LIMIT: Final = 1_000_000
"""The most one evaluation may cost (celconfig.PerCallLimit, ~0.1 s of Go)."""
RUNTIME_BUDGET: Final = 10_000_000
"""What all the rules of one validation may cost together (celconfig.RuntimeCELCostBudget)."""
STATIC_RULE_LIMIT: Final = 10_000_000
"""The estimated cost allowed to one rule times its cardinality (StaticEstimatedCostLimit)."""
STATIC_CRD_LIMIT: Final = 100_000_000
"""The estimated cost allowed to all the rules of a schema (StaticEstimatedCRDCostLimit)."""
MAX_REQUEST_SIZE: Final = 3 * 1024 * 1024
"""celconfig.MaxRequestSizeBytes: the worst case of unbounded lists, maps and strings derives from it."""

UINT64_MAX: Final = 2**64 - 1
STRING_TRAVERSAL: Final = 0.1  # cel-go common.StringTraversalCostFactor
REGEX_LENGTH: Final = 0.25  # cel-go common.RegexStringLengthCostFactor
LIST_CREATE: Final = 10
MAP_CREATE: Final = 30

ENGINE_CALL_COSTS: Final = {
    "matches": 100,
    **dict.fromkeys(
        (
            "charAt",
            "format",
            "indexOf",
            "join",
            "lastIndexOf",
            "lowerAscii",
            "replace",
            "split",
            "substring",
            "trim",
            "upperAscii",
            "validate",
        ),
        20,
    ),
}
"""The runtime's extra charge per call, in units of ~100 ns: a Python callback (~2 µs), a regex compiled
at each call (~10 µs)."""
SETS_COST_FACTORS: Final = {"sets.contains": 1, "sets.intersects": 1, "sets.equivalent": 2}
"""cel-go's sets extension: equivalence compares both ways."""
ENGINE_PART_COST: Final = 25
"""The runtime's extra charge per part ``split`` returns (each is converted back to the engine: ~2.5 µs)."""

# apiserver/pkg/cel/types.go: the smallest JSON of each type, and the largest of the formatted strings
MIN_BOOL_SIZE: Final = 4
MIN_NUMBER_SIZE: Final = 1
MIN_STRING_SIZE: Final = 2
MIN_DURATION_SIZE: Final = 3
DATE_SIZE: Final = 12
MIN_DATETIME_SIZE: Final = 21
MAX_DURATION_SIZE: Final = 32
MAX_DATETIME_SIZE: Final = 64
MAX_FORMAT_ERRORS: Final = 4
"""The most messages a format's ``validate`` gives (qualifiedName: two for its prefix, two for its name)."""
MAX_FORMAT_MESSAGE: Final = 512
"""The longest of those messages, without the string validated (which uri's quote)."""


# -- arithmetic that saturates at 2^64-1, as cel-go's --------------------------------------------------------


def _add(x: int, y: int) -> int:
    return min(x + y, UINT64_MAX)


def _mul(x: int, y: int) -> int:
    return min(x * y, UINT64_MAX)


def _factor(x: int, factor: float) -> int:
    """cel-go multiplyByCostFactor: rounded up, saturating."""
    product = math.ceil(float(x) * factor)
    return UINT64_MAX if product >= 2.0**64 else int(product)


@dataclass(frozen=True, slots=True)
class Range:
    """cel-go's SizeEstimate and CostEstimate: a [min, max] pair."""

    min: int
    max: int

    def __add__(self, other: Range) -> Range:
        return Range(_add(self.min, other.min), _add(self.max, other.max))

    def __mul__(self, other: Range) -> Range:
        return Range(_mul(self.min, other.min), _mul(self.max, other.max))

    def factor(self, factor: float) -> Range:
        return Range(_factor(self.min, factor), _factor(self.max, factor))

    def union(self, other: Range) -> Range:
        return Range(min(self.min, other.min), max(self.max, other.max))


ZERO: Final = Range(0, 0)
ONE: Final = Range(1, 1)
UNKNOWN: Final = Range(0, UINT64_MAX)


def fixed(value: int) -> Range:
    return Range(value, value)


# -- types -------------------------------------------------------------------------------------------------


@dataclass(eq=False)
class DeclType:
    """kube's DeclType, reduced to what costing needs: the CEL kind (bool, int, uint, double, string, bytes,
    duration, timestamp, list, map, object, dyn, null, optional, type), the size bound (``max_elements``),
    the smallest serialized size, and the element, key and field types."""

    kind: str
    max_elements: int = 0
    min_size: int = 0
    elem: DeclType | None = None
    key: DeclType | None = None
    fields: dict[str, tuple[str, DeclType]] = field(default_factory=dict)
    """CEL (escaped) name -> (JSON name, type)."""


def _simple(kind: str, min_size: int = 0) -> DeclType:
    return DeclType(kind, min_size=min_size)


_SCALARS: Final = frozenset({"bool", "double", "duration", "int", "timestamp", "uint"})


def _max_string(s: Schema) -> int:
    """estimateMaxStringLengthPerRequest."""
    if s.embedded_resource:
        return 2**63 - 1
    return {
        "duration": MAX_DURATION_SIZE,
        "date": DATE_SIZE,
        "date-time": MAX_DATETIME_SIZE,
    }.get(s.format, MAX_REQUEST_SIZE - 2)


def decl_type(s: Schema, resource_root: bool = False) -> DeclType | None:
    """kube's SchemaDeclType: the CEL type of values of ``s`` with their size bounds (None: no type)."""
    if s.int_or_string:
        return DeclType("dyn", MAX_REQUEST_SIZE - 2, 1)
    kind = s.types[0] if len(s.types) == 1 else ""
    if resource_root:
        return _with_object_meta(s)
    if kind == "array":
        return _list_type(s)
    if kind == "object":
        return _object_type(s)
    if kind == "string":
        return _string_type(s)
    return {
        "boolean": lambda: _simple("bool", MIN_BOOL_SIZE),
        "number": lambda: _simple("double", MIN_NUMBER_SIZE),
        "integer": lambda: _simple("int", MIN_NUMBER_SIZE),
    }.get(kind, lambda: None)()


def _list_type(s: Schema) -> DeclType | None:
    if s.items is None:
        return None
    items = decl_type(s.items, s.items.embedded_resource)
    if items is None:
        return None
    bound = (
        max(s.max_items, 0)
        if s.max_items is not None
        else (MAX_REQUEST_SIZE - 2) // (items.min_size + 1)
    )
    return DeclType("list", bound, 2, elem=items)


def _object_type(s: Schema) -> DeclType | None:
    extra = s.additional_properties
    if extra is not None:
        values = decl_type(extra, extra.embedded_resource)
        if values is None:
            return None
        bound = (
            max(s.max_properties, 0)
            if s.max_properties is not None
            else (MAX_REQUEST_SIZE - 2) // (values.min_size + 6)
        )
        return DeclType("map", bound, 2, elem=values, key=_simple("string", MIN_STRING_SIZE))
    fields: dict[str, tuple[str, DeclType]] = {}
    min_size = 2
    for name, prop in s.properties.items():
        prop_type = decl_type(prop, prop.embedded_resource)
        if prop_type is None:
            continue
        escaped = escape(name)
        if escaped is not None:
            fields[escaped] = (name, prop_type)
        if name in s.required and prop.default is MISSING:  # defaults are filled in server-side
            min_size += len(name) + prop_type.min_size + 4
    return DeclType("object", 0, min_size, fields=fields)


def _string_type(s: Schema) -> DeclType:
    formatted = {
        "byte": ("bytes", MIN_STRING_SIZE),
        "duration": ("duration", MIN_DURATION_SIZE),
        "date": ("timestamp", DATE_SIZE),
        "date-time": ("timestamp", MIN_DATETIME_SIZE),
    }.get(s.format)
    if formatted is not None:
        kind, min_size = formatted
        bound = (
            max(s.max_length, 0) if kind == "bytes" and s.max_length is not None else _max_string(s)
        )
        return DeclType(kind, bound, min_size)
    if s.max_length is not None:
        # maxLength counts code points, sizes count bytes: up to 4 each (kube's comment)
        bound = max(s.max_length, 0) * 4
    elif s.enum:
        bound = max((len(v.encode()) for v in s.enum if isinstance(v, str)), default=0)
    else:
        bound = _max_string(s)
    return DeclType("string", bound, MIN_STRING_SIZE)


def _with_object_meta(s: Schema) -> DeclType:
    """WithTypeAndObjectMeta: a resource's root always has apiVersion, kind and metadata.name/generateName."""
    root = _object_type(s) or DeclType("object", 0, 2)
    unbounded = DeclType("string", MAX_REQUEST_SIZE - 2, MIN_STRING_SIZE)
    metadata = DeclType(
        "object",
        0,
        2,
        fields={"name": ("name", unbounded), "generateName": ("generateName", unbounded)},
    )
    root.fields.update(
        {
            "apiVersion": ("apiVersion", unbounded),
            "kind": ("kind", unbounded),
            "metadata": ("metadata", metadata),
        }
    )
    return root


def max_cardinality(min_size: int) -> int:
    """How often a rule on a node whose values serialize to at least ``min_size`` bytes can run in one
    request (kube's maxCardinality, the fallback when an enclosing list or map is unbounded)."""
    return MAX_REQUEST_SIZE // (min_size + 1)


# -- sizes -------------------------------------------------------------------------------------------------

Path = tuple[str, ...]


class Sizes(Protocol):
    """The size of what a path reaches (cel-go's CostEstimator.EstimateSize), or None when unknown."""

    def size(self, path: Path) -> Range | None: ...


class DeclaredSizes:
    """Sizes from the schema's bounds (kube's sizeEstimator): whatever variable a path starts from, the
    rest of it is walked from the rule's own node."""

    def __init__(self, root: DeclType) -> None:
        self.root = root

    def size(self, path: Path) -> Range | None:
        node = walk(self.root, path)
        return None if node is None else Range(0, node.max_elements)


def walk(root: DeclType, path: Path) -> DeclType | None:
    """The type a path reaches from ``root`` (its first step, the variable, skipped), or None."""
    if not path:
        return None
    node: DeclType | None = root
    for step in path[1:]:
        if node is None:
            return None
        if step in ("@items", "@values"):
            node = node.elem
        elif step == "@keys":
            node = node.key
        else:
            found = node.fields.get(step)
            node = found[1] if found is not None else None
    return node


# -- the estimator -----------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Local:
    path: Path
    size: Range | None
    entry: _Entry | None
    type: DeclType


@dataclass(frozen=True, slots=True)
class _Entry:
    """cel-go's entrySizeEstimate: the kind of container and the sizes of its keys and values."""

    container: str
    key: Range
    val: Range

    def union(self, other: _Entry | None) -> _Entry | None:
        if other is None:
            return None
        return _Entry(self.container, self.key.union(other.key), self.val.union(other.val))


DYN: Final = _simple("dyn")
_TYPES_OF_LITERALS: Final = {
    kind: _simple(kind) for kind in ("bool", "int", "uint", "double", "string", "bytes", "null")
}
_BOOL_RESULTS: Final = frozenset(
    {
        "_<_", "_<=_", "_>_", "_>=_", "_==_", "_!=_", "@in", "!_", "_&&_", "_||_",
        "@not_strictly_false", "startsWith", "endsWith", "contains", "matches", "hasValue",
        "sets.contains", "sets.equivalent", "sets.intersects", "isSemver", "ip.isCanonical",
    }
)  # fmt: skip
_INT_RESULTS: Final = frozenset(
    {
        "size", "int", "indexOf", "lastIndexOf", "getDate", "getDayOfMonth", "getDayOfWeek",
        "getDayOfYear", "getFullYear", "getHours", "getMilliseconds", "getMinutes", "getMonth",
        "getSeconds", "major", "minor", "patch",
    }
)  # fmt: skip
_CONVERSIONS: Final = {
    "uint": "uint", "double": "double", "string": "string", "bytes": "bytes", "bool": "bool",
    "duration": "duration", "timestamp": "timestamp", "type": "type",
    "lowerAscii": "string", "upperAscii": "string", "trim": "string", "replace": "string", "join": "string",
    "substring": "string", "charAt": "string", "format": "string", "strings.quote": "string",
}  # fmt: skip
_ORDERED: Final = frozenset({"_<_", "_<=_", "_>_", "_>=_"})
# kube's library types, as the results of the calls that make them (a CIDR's ``ip()`` and ``masked()``, a
# quantity's ``add`` and ``sub``): their equality is costed by kube's library (cost.go, "_==_")
_LIBRARY_RESULTS: Final = {
    "ip": "net.IP", "cidr": "net.CIDR", "masked": "net.CIDR", "quantity": "kubernetes.Quantity",
    "add": "kubernetes.Quantity", "sub": "kubernetes.Quantity", "semver": "kubernetes.Semver",
    "url": "kubernetes.URL",
}  # fmt: skip
_UNIT_EQUALITY: Final = frozenset(
    {"net.IP", "net.CIDR", "kubernetes.Quantity", "kubernetes.Semver"}
)
_IP_BYTES: Final = Range(4, 16)
"""An IP's bytes, v4 or v6: what containsIP and containsCIDR compare."""
_SELECTABLE: Final = frozenset({"map", "object"})


class _Coster:
    """cel-go's coster (checker/cost.go), over this package's AST, with kube's library estimates and
    ``PresenceTestHasCost(false)`` (kube keeps has() free)."""

    def __init__(self, variables: dict[str, DeclType], sizes: Sizes, engine: bool) -> None:
        self.variables = variables
        self.sizes = sizes
        self.engine = engine
        self.paths: dict[int, Path] = {}
        self.types: dict[int, DeclType] = {}
        self.computed: dict[int, Range] = {}
        self.entries: dict[int, _Entry] = {}
        self.locals: dict[str, list[_Local]] = {}

    # - bookkeeping

    def local(self, name: str) -> _Local | None:
        stack = self.locals.get(name)
        return stack[-1] if stack else None

    def push(self, name: str, local: _Local) -> None:
        self.locals.setdefault(name, []).append(local)

    def pop(self, name: str) -> None:
        self.locals[name].pop()

    def path(self, e: Expr) -> Path:
        if isinstance(e, Ident):
            found = self.local(e.name)
            if found is not None:
                return found.path
        return self.paths.get(e.id, ())

    def type(self, e: Expr) -> DeclType:
        return self.types.get(e.id, DYN)

    def size(self, e: Expr) -> Range | None:
        """cel-go computeSize."""
        known = self.computed.get(e.id)
        if known is not None:
            return known
        literal = _literal_size(e)
        if literal is not None:
            return literal
        path = self.path(e)
        estimated = self.sizes.size(path) if path else None
        if estimated is not None:
            self.computed[e.id] = estimated
            return estimated
        if _is_scalar(self.type(e)):
            return ONE
        if isinstance(e, Ident):
            found = self.local(e.name)
            if found is not None and found.size is not None:
                return found.size
        return None

    def size_or_unknown(self, e: Expr) -> Range:
        known = self.size(e)
        return UNKNOWN if known is None else known

    def entry(self, e: Expr) -> _Entry | None:
        known = self.entries.get(e.id)
        if known is not None:
            return known
        if isinstance(e, Ident):
            found = self.local(e.name)
            if found is not None:
                return found.entry
        return None

    # - nodes

    def cost(self, e: Expr) -> Range:
        if isinstance(e, Literal):
            self.types[e.id] = _TYPES_OF_LITERALS[e.kind]
            return ZERO
        if isinstance(e, Ident):
            return self.ident(e)
        if isinstance(e, Select):
            return self.select(e)
        if isinstance(e, Call):
            return self.call(e)
        if isinstance(e, CreateList):
            return self.create_list(e)
        if isinstance(e, CreateMap):
            return self.create_map(e)
        if isinstance(e, Comprehension):
            return self.comprehension(e)
        return ZERO

    def ident(self, e: Ident) -> Range:
        found = self.local(e.name)
        if found is not None:
            self.paths[e.id] = found.path
            self.types[e.id] = found.type
        else:
            self.paths[e.id] = (e.name,)
            self.types[e.id] = self.variables.get(e.name, DYN)
        return ONE

    def select(self, e: Select) -> Range:
        operand = self.cost(e.operand)
        operand_type = self.type(e.operand)
        if e.test_only:
            self.types[e.id] = _TYPES_OF_LITERALS["bool"]
            return operand  # presence tests are free (PresenceTestHasCost(false))
        if operand_type.kind in _SELECTABLE:
            operand = operand + ONE
        self.paths[e.id] = (*self.path(e.operand), e.name)
        self.types[e.id] = _member(operand_type, e.name)
        return operand

    def create_list(self, e: CreateList) -> Range:
        total = ZERO
        item = Range(0 if not e.elements else UINT64_MAX, 0)
        element_type = DYN
        for element in e.elements:
            total = total + self.cost(element)
            item = item.union(self.size_or_unknown(element))
            element_type = self.type(element)
        self.entries[e.id] = _Entry("list", ONE, item)
        self.types[e.id] = DeclType("list", elem=element_type)
        return total + fixed(LIST_CREATE)

    def create_map(self, e: CreateMap) -> Range:
        total = ZERO
        empty = not e.entries
        keys = Range(0 if empty else UINT64_MAX, 0)
        values = Range(0 if empty else UINT64_MAX, 0)
        value_type = DYN
        for key, value in e.entries:
            total = total + self.cost(key) + self.cost(value)
            keys = keys.union(self.size_or_unknown(key))
            values = values.union(self.size_or_unknown(value))
            value_type = self.type(value)
        self.entries[e.id] = _Entry("map", keys, values)
        self.types[e.id] = DeclType("map", elem=value_type, key=_TYPES_OF_LITERALS["string"])
        return total + fixed(MAP_CREATE)

    def comprehension(self, e: Comprehension) -> Range:
        total = self.cost(e.iter_range) + self.cost(e.accu_init)
        accu_type = self.type(e.accu_init)
        accu_size = self.size(e.accu_init)
        if self.engine and isinstance(e.accu_init, CreateList):
            # map and filter grow it to the range's size
            accu_size = self.size_or_unknown(e.iter_range)
        self.push(
            e.accu_var,
            _Local(self.path(e.accu_init), accu_size, self.entry(e.accu_init), accu_type),
        )
        for name, local in self._iteration_variables(e):
            self.push(name, local)
        loop = self.cost(e.loop_condition)
        step_cost = self.cost(e.loop_step)
        for name in (e.iter_var, e.iter_var2):
            if name:
                self.pop(name)
        total = total + self.cost(e.result)
        self.pop(e.accu_var)
        count = self.size_or_unknown(e.iter_range)
        total = total + count * (step_cost + loop)
        self.types[e.id] = self.type(e.result)
        if isinstance(e.accu_init, Literal):
            init_size = self.size(e.accu_init)
            if init_size is not None:
                self.computed[e.id] = init_size
        elif isinstance(e.accu_init, CreateList | CreateMap):
            self.computed[e.id] = count
            step_entry = self.entry(e.loop_step)
            if step_entry is not None:
                self.entries[e.id] = step_entry
        return total

    def _iteration_variables(self, e: Comprehension) -> list[tuple[str, _Local]]:
        """The comprehension's variables: the item (or key) of its range; with two variables, the index
        (or key) and the value."""
        range_type = self.type(e.iter_range)
        entry = self.entry(e.iter_range)
        container = entry.container if entry is not None else range_type.kind
        path = self.path(e.iter_range)
        items = _Local(
            (*path, "@items"), entry.val if entry else None, None, range_type.elem or DYN
        )
        keys = _Local((*path, "@keys"), entry.key if entry else None, None, range_type.key or DYN)
        if not e.iter_var2:
            return [(e.iter_var, items if container == "list" else keys)]
        if container == "list":
            index = _Local((), ONE, None, _TYPES_OF_LITERALS["int"])
            return [(e.iter_var, index), (e.iter_var2, items)]
        values = _Local(
            (*path, "@values"), entry.val if entry else None, None, range_type.elem or DYN
        )
        return [(e.iter_var, keys), (e.iter_var2, values)]

    def call(self, e: Call) -> Range:
        if e.function == "dyn" and len(e.args) == 1 and e.target is None:
            arg_cost = self.cost(e.args[0])
            self.types[e.id] = self.type(e.args[0])
            self._copy_sizes(e, e.args[0])
            return ONE + arg_cost
        arg_costs = [self.cost(arg) for arg in e.args]
        total = ZERO
        if e.target is not None:
            total = self.cost(e.target)
        self.types[e.id] = self._result_type(e)
        cost, result_size = self.function_cost(e, arg_costs)
        if e.function == "_[_]" and len(e.args) == 2:
            container = self.type(e.args[0])
            entry = self.entry(e.args[0])
            result_size = entry.val if entry is not None else None
            step = "@values" if container.kind == "map" else "@items"
            self.paths[e.id] = (*self.path(e.args[0]), step)
        if result_size is None:
            result_size = self.size(e)
        if result_size is not None:
            self.computed[e.id] = result_size
        if e.target is not None and self.engine:
            self._format_sizes(e)
        return total + cost

    def _format_sizes(self, e: Call) -> None:
        """With the values known: a format's ``validate`` gives an optional list of at most
        MAX_FORMAT_ERRORS messages (each kube's words, with at most the string itself), and
        ``value()``/``orValue()`` of it that list."""
        if e.function == "validate" and len(e.args) == 1:
            self.types[e.id] = DeclType("optional", elem=DeclType("list", elem=_simple("string")))
            text = self.size_or_unknown(e.args[0])
            self.computed[e.id] = Range(0, MAX_FORMAT_ERRORS)
            self.entries[e.id] = _Entry("list", ONE, Range(0, MAX_FORMAT_MESSAGE) + text)
        elif e.function in ("value", "orValue") and e.target is not None:
            target = e.target
            if isinstance(target, Call) and target.function == "validate":
                self._copy_sizes(e, target)

    def _copy_sizes(self, dst: Expr, src: Expr) -> None:
        size, entry = self.size(src), self.entry(src)
        if size is not None:
            self.computed[dst.id] = size
        if entry is not None:
            self.entries[dst.id] = entry

    def _result_type(self, e: Call) -> DeclType:
        function, args = e.function, e.args
        first = (
            self.type(e.target if e.target is not None else args[0]) if (args or e.target) else DYN
        )
        if function in _BOOL_RESULTS:
            return _TYPES_OF_LITERALS["bool"]
        if function in _INT_RESULTS:
            return _TYPES_OF_LITERALS["int"]
        if function in _CONVERSIONS:
            return _simple(_CONVERSIONS[function])
        if function in _LIBRARY_RESULTS:
            return _simple(_LIBRARY_RESULTS[function])
        if function == "split":
            return DeclType("list", elem=_TYPES_OF_LITERALS["string"])
        if function == "_[_]":
            return first.elem or DYN
        if function == "_?_:_":
            then = self.type(args[1])
            return then if then.kind != "dyn" else self.type(args[2])
        if function in ("value", "orValue"):
            return first.elem or DYN
        if function in ("_+_", "_-_", "_*_", "_/_", "_%_", "-_"):
            return first
        return DYN

    # - function costs: kube's library first, then cel-go's

    def function_cost(self, e: Call, arg_costs: list[Range]) -> tuple[Range, Range | None]:
        args_total = ZERO
        for arg_cost in arg_costs:
            args_total = args_total + arg_cost
        library = self._library_cost(e)
        if library is not None:
            cost, size = library[0] + args_total, library[1]
        else:
            cost, size = self._standard_cost(e, arg_costs, args_total)
        if self.engine and e.target is not None and e.function in ENGINE_CALL_COSTS:
            cost = cost + fixed(ENGINE_CALL_COSTS[e.function])
            if e.function == "split" and size is not None:
                cost = cost + size.factor(ENGINE_PART_COST)
        return cost, size

    def _library_cost(self, e: Call) -> tuple[Range, Range | None] | None:
        """k8s.io/apiserver/pkg/cel/library/cost.go EstimateCallCost, for the functions served here (and
        cel-go's own estimate of the sets extension)."""
        target = e.target
        factor = SETS_COST_FACTORS.get(e.function)
        if factor is not None and len(e.args) == 2:
            # cel-go ext/sets.go estimateSetsCost: one comparison per pair of items, plus the call
            pairs = self.size_or_unknown(e.args[0]) * self.size_or_unknown(e.args[1])
            return pairs.factor(factor) + ONE, None
        if e.function == "ip.isCanonical" and len(e.args) == 1:  # parsed, then compared: twice
            return self.size_or_unknown(e.args[0]).factor(2 * STRING_TRAVERSAL), None
        if e.function == "_==_" and len(e.args) == 2:
            return self._library_equality(*e.args)
        if e.function == "url" and len(e.args) == 1:
            size = self.size_or_unknown(e.args[0])
            return size.factor(STRING_TRAVERSAL), size
        if target is None:
            return None
        if e.function in ("containsIP", "containsCIDR") and e.args:
            # two IPs' bytes compared; a CIDR masked and compared once more; a string argument parsed
            cost = (_IP_BYTES + _IP_BYTES).factor(STRING_TRAVERSAL)
            if e.function == "containsCIDR":
                cost = cost + _IP_BYTES.factor(STRING_TRAVERSAL) + ONE
            if self.type(e.args[0]).kind == "string":
                cost = cost + self.size_or_unknown(e.args[0]).factor(STRING_TRAVERSAL)
            return cost, None
        function, args = e.function, e.args
        size = self.size_or_unknown(target)
        if function in ("indexOf", "lastIndexOf"):
            element = self._list_element(target)
            if element is None:  # a string target
                return size.factor(STRING_TRAVERSAL), None
            per_element = ONE
            if element[1].kind in ("string", "bytes"):
                per_element = per_element + element[0].factor(STRING_TRAVERSAL)
            return size * per_element, None
        if function in ("lowerAscii", "upperAscii", "trim", "substring"):
            return size.factor(STRING_TRAVERSAL), size
        if function == "validate" and len(args) == 1:  # format: the string times the format's regex
            named = target.function if isinstance(target, Call) else ""
            regex = MAX_REGEX_SIZES.get(named, max(MAX_REGEX_SIZES.values()))
            text = (self.size_or_unknown(args[0]) + ONE).factor(STRING_TRAVERSAL)
            return text * fixed(regex).factor(REGEX_LENGTH), None
        if function == "escapeKey" and len(args) == 1:
            # kube's JSONPatch library (mutating admission policies): one pass over the key, which
            # at most doubles ("~" and "/" become two characters each)
            key = self.size_or_unknown(args[0])
            return key.factor(STRING_TRAVERSAL), Range(key.min, _mul(key.max, 2))
        if function in ("isSorted", "sum", "min", "max"):  # one step per item (cost.go: lists)
            return size, None
        if function in ("find", "findAll") and args:  # as matches: the text times the pattern
            text = (size + ONE).factor(STRING_TRAVERSAL)
            return text * self.size_or_unknown(args[0]).factor(REGEX_LENGTH), None
        if function == "replace" and len(args) >= 2:
            return size.factor(2 * STRING_TRAVERSAL), _replaced_size(
                size, self.size_or_unknown(args[0]), self.size_or_unknown(args[1])
            )
        if function == "split":
            bound = size.max
            if len(args) > 1 and isinstance(args[1], Literal) and isinstance(args[1].value, int):
                bound = args[1].value % 2**64
            return size.factor(2 * STRING_TRAVERSAL), Range(0, bound)
        if function == "join":
            joined = ZERO
            element = self._list_element(target)
            if element is not None:
                joined = size * element[0]
            if args:
                separators = Range(max(size.min - 1, 0), max(size.max - 1, 0))
                joined = joined + self.size_or_unknown(args[0]) * separators
            return joined.factor(STRING_TRAVERSAL), joined
        return None

    def _library_equality(self, lhs: Expr, rhs: Expr) -> tuple[Range, Range | None] | None:
        """kube's cost of ``==`` between two values of one of its library types: one step (IPs, CIDRs,
        quantities, semvers), or a URL's text; None for other types, which cel-go costs."""
        kind = self.type(lhs).kind
        if kind != self.type(rhs).kind:
            return None
        if kind in _UNIT_EQUALITY:
            return ONE, None
        if kind == "kubernetes.URL":  # cost.go sizes both sides by the right one's computed size
            size = self.size(rhs) or ONE
            return Range(1, size.max).factor(STRING_TRAVERSAL), None
        return None

    def _list_element(self, target: Expr) -> tuple[Range, DeclType] | None:
        """kube's listElementNode: the size and type of a list's items (their path is the list's plus
        @items), or None when ``target`` is not a list."""
        list_type = self.type(target)
        if list_type.kind != "list":
            return None
        element_type = list_type.elem or DYN
        path = self.path(target)
        found = self.sizes.size((*path, "@items")) if path else None
        entry = self.entry(target) if found is None and self.engine else None
        if entry is not None and entry.container == "list":  # a list a call made (format.validate)
            found = entry.val
        return (UNKNOWN if found is None else found), element_type

    def _standard_cost(
        self, e: Call, arg_costs: list[Range], args_total: Range
    ) -> tuple[Range, Range | None]:
        """cel-go's functionCost switch over the standard overloads."""
        function, args, target = e.function, e.args, e.target
        if function == "bytes" and len(args) == 1 and self.type(args[0]).kind == "string":
            size = self.size_or_unknown(args[0])
            return size.factor(STRING_TRAVERSAL) + args_total, Range(size.min, _mul(size.max, 4))
        if function == "string" and len(args) == 1 and self.type(args[0]).kind == "bytes":
            size = self.size_or_unknown(args[0])
            return size.factor(STRING_TRAVERSAL) + args_total, Range(size.min // 4, size.max)
        if self.engine and function == "string" and len(args) == 1 and target is None:
            # a bound with the values known: string() of a string is that string, of anything else a
            # number, bool, timestamp or duration formatted (at most MAX_DATETIME_SIZE); cel-go leaves the
            # size unknown, which bounds a message such as 'n is ' + string(x) at 2^64
            argument = self.size(args[0])
            if argument is not None:
                return ONE + args_total, Range(0, max(argument.max, MAX_DATETIME_SIZE))
        if function == "format" and target is not None:  # ext strings: the format string's length
            return self.size_or_unknown(target).factor(STRING_TRAVERSAL) + args_total, None
        if function == "strings.quote" and len(args) == 1:
            # ext strings: each character may be escaped (two), and the quotes are added
            size = self.size_or_unknown(args[0])
            quoted = Range(_add(size.min, 2), _add(_mul(size.max, 2), 2))
            return size.factor(STRING_TRAVERSAL) + args_total, quoted
        if function in ("startsWith", "endsWith") and target is not None and len(args) == 1:
            return self.size_or_unknown(args[0]).factor(STRING_TRAVERSAL) + args_total, None
        if function == "@in" and len(args) == 2 and self.type(args[1]).kind != "map":
            return self.size_or_unknown(args[1]).factor(1) + args_total, None
        if function == "matches" and target is not None and len(args) == 1:
            text = (self.size_or_unknown(target) + ONE).factor(STRING_TRAVERSAL)
            regex = self.size_or_unknown(args[0]).factor(REGEX_LENGTH)
            return text * regex + args_total, None
        if function == "contains" and target is not None and len(args) == 1:
            text = self.size_or_unknown(target).factor(STRING_TRAVERSAL)
            sub = self.size_or_unknown(args[0]).factor(STRING_TRAVERSAL)
            return text * sub + args_total, None
        if function in ("_&&_", "_||_"):
            lhs, rhs = arg_costs
            return Range(lhs.min, (lhs + rhs).max), None
        if function == "_?_:_":
            size = self.size_or_unknown(args[1]).union(self.size_or_unknown(args[2]))
            then_entry = self.entry(args[1])
            entry = then_entry.union(self.entry(args[2])) if then_entry is not None else None
            if entry is not None:
                self.entries[e.id] = entry
            return arg_costs[0] + arg_costs[1].union(arg_costs[2]), size
        if function == "_+_" and len(args) == 2:
            kind = self.type(args[0]).kind
            if kind in ("string", "bytes", "list"):
                return self._concatenation(e, kind, args_total)
        if function in ("_==_", "_!=_") or (
            function in _ORDERED and self.type(args[0]).kind in ("string", "bytes")
        ):
            smallest = min(self.size_or_unknown(args[0]).max, self.size_or_unknown(args[1]).max)
            compared = Range(1 if smallest > 0 else 0, smallest)
            return compared.factor(STRING_TRAVERSAL) + args_total, None
        return ONE + args_total, None

    def _concatenation(self, e: Call, kind: str, args_total: Range) -> tuple[Range, Range | None]:
        lhs, rhs = e.args
        result = self.size_or_unknown(lhs) + self.size_or_unknown(rhs)
        lhs_entry = self.entry(lhs)
        entry = lhs_entry.union(self.entry(rhs)) if lhs_entry is not None else None
        if entry is not None:
            self.entries[e.id] = entry
        if kind == "list":
            if self.engine:
                # the engine copies both lists: half the result, on average, in a loop
                return ONE + result.factor(0.5) + args_total, result
            return ONE + args_total, result
        return result.factor(STRING_TRAVERSAL) + args_total, result


def _replaced_size(size: Range, old: Range, new: Range) -> Range:
    """The size of ``replace``'s result (kube's library estimate)."""
    if old.min == 0:
        count_max, kept_max = (size.max + 1 if size.max < UINT64_MAX else size.max), size.max
    elif new.max <= old.min:
        count_max, kept_max = 0, size.max
    else:
        count_max, kept_max = math.ceil(size.max / old.min), 0
    if old.max == 0:
        count_min, kept_min = (size.min + 1 if size.min < UINT64_MAX else size.min), size.min
    elif old.max <= new.min:
        count_min, kept_min = 0, size.min
    else:
        count_min, kept_min = math.ceil(size.min / old.max), 0
    return Range(count_min, count_max) * new + Range(kept_min, kept_max)


def _literal_size(e: Expr) -> Range | None:
    """cel-go computeExprSize."""
    if isinstance(e, Literal):
        return fixed(e.size)
    if isinstance(e, CreateList):
        return fixed(len(e.elements))
    if isinstance(e, CreateMap):
        return fixed(len(e.entries))
    return None


def _is_scalar(t: DeclType) -> bool:
    if t.kind == "optional":
        return t.elem is not None and _is_scalar(t.elem)
    return t.kind in _SCALARS


def _member(t: DeclType, name: str) -> DeclType:
    if t.kind == "object":
        found = t.fields.get(name)
        return found[1] if found is not None else DYN
    if t.kind == "map":
        return t.elem or DYN
    return DYN


def estimate(
    ast: Expr,
    self_type: DeclType,
    sizes: Sizes,
    *,
    optional_old_self: bool = False,
    engine: bool = False,
) -> Range:
    """The cost of ``ast`` evaluated with ``self`` (and ``oldSelf``) of ``self_type``, with ``sizes``.

    ``engine``: cost what this server's engine does dearer than cel-go as it does it: list concatenation
    copies (cel-go's concatenates in constant time, so ``map`` and ``filter`` are quadratic here: 3,000
    items take half a second), every call of a function written in Python (the string library) or of
    ``matches`` (the regex is compiled at each call) has a fixed overhead, and ``split`` converts each part
    it returns. kube's model is for the static checks, which decide what a CRD may declare; the runtime
    bound uses this one, so that what an evaluation is charged follows the time it takes (bench/
    celcost_bench.py)."""
    old = DeclType("optional", elem=self_type) if optional_old_self else self_type
    return _Coster({"self": self_type, "oldSelf": old}, sizes, engine).cost(ast)


def result_kind(ast: Expr, self_type: DeclType, *, optional_old_self: bool = False) -> str:
    """The CEL kind of ``ast``'s result as the estimator types it ("dyn" where it cannot tell): what kube's
    checker requires to be a bool for a rule, a string for a message expression."""
    old = DeclType("optional", elem=self_type) if optional_old_self else self_type
    coster = _Coster({"self": self_type, "oldSelf": old}, DeclaredSizes(self_type), False)
    coster.cost(ast)
    return coster.type(ast).kind


def cost_error(what: str, cost: int, limit: int) -> str:
    """kube's getCostErrorMessage."""
    factor = cost / limit
    if factor > 100.0:
        shown = "more than 100x"
    elif factor < 1.5:
        shown = f"{factor:f}x"
    else:
        shown = f"{factor:.1f}x"
    return (
        f"{what} exceeds budget by factor of {shown} (try simplifying the rule, or adding maxItems,"
        " maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )


def saturating_product(values: Iterable[int]) -> int:
    """multiplyWithOverflowGuard over several factors."""
    product = 1
    for value in values:
        if value == 0:
            return 0
        product = _mul(product, value)
    return product
