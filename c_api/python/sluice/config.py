"""ConfigProto (proto/config.proto) serialized by hand, so the binding needs no protobuf
package: encode_config({"device_count": {"CPU": 2}, "inter_op_parallelism_threads": 1}).
config_test.py checks every field against the real schema.
"""

__all__ = ["encode_config"]

FIELDS = {
    # name: (field number in proto/config.proto, kind)
    "device_count": (1, "map<string,int32>"),
    "intra_op_parallelism_threads": (2, "int"),
    "placement_period": (3, "int"),
    "device_filters": (4, "repeated string"),
    "inter_op_parallelism_threads": (5, "int"),
    "allow_soft_placement": (7, "int"),
    "log_device_placement": (8, "int"),
    "use_per_session_threads": (9, "int"),
    "operation_timeout_in_ms": (11, "int"),
    # A nested ResourceLimits: {"memory_limit_bytes": 1 << 30, "max_graph_nodes": 100000}.
    "resource_limits": (1002, "message"),
    # Sluice's PlacementOptions: {"policy": "pipeline"} cuts the graph into stages, one per
    # worker device; "device_map": [{"pattern": "conv*", "device": "/job:worker/task:1"}].
    "placement": (1001, "placement"),
    # GraphOptions: {"rewrite_options": {"disable_meta_optimizer": True}} or toggles such as
    # {"rewrite_options": {"layout_optimizer": "OFF", "disabled_passes": ["fold_pads"]}}.
    "graph_options": (10, "graph_options"),
}

# RewriterConfig's fields (TensorFlow's numbers; proto/config.proto): name -> (number, kind).
REWRITER_FIELDS = {
    "layout_optimizer": (1, "toggle"),
    "disable_model_pruning": (2, "int"),
    "constant_folding": (3, "toggle"),
    "memory_optimization": (4, "int"),
    "arithmetic_optimization": (7, "toggle"),
    "dependency_optimization": (8, "toggle"),
    "remapping": (14, "toggle"),
    "disable_meta_optimizer": (19, "int"),
    "optimizers": (100, "repeated string"),
    "disabled_passes": (1001, "repeated string"),
}
TOGGLES = {"DEFAULT": 0, "ON": 1, "OFF": 2, "AGGRESSIVE": 3}

# Fields of the nested messages, by the ConfigProto field that holds them.
SUBFIELDS = {
    "resource_limits": {"memory_limit_bytes": 1, "max_graph_nodes": 2},
}


def _varint(n):
    n &= (1 << 64) - 1  # Negative ints are sent as 10-byte two's complement.
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number, wire_type):
    return _varint((number << 3) | wire_type)


def _length_delimited(number, payload):
    return _field(number, 2) + _varint(len(payload)) + payload


def _encode_rewriter(options):
    payload = b""
    for name, value in options.items():
        if name not in REWRITER_FIELDS:
            raise ValueError("unknown rewrite_options field %r (known: %s)"
                             % (name, ", ".join(sorted(REWRITER_FIELDS))))
        number, kind = REWRITER_FIELDS[name]
        if kind == "repeated string":
            if isinstance(value, str):
                raise ValueError("rewrite_options %s is a list of names, not %r" % (name, value))
            for item in value:
                payload += _length_delimited(number, str(item).encode())
            continue
        if kind == "toggle" and isinstance(value, str):
            if value.upper() not in TOGGLES:
                raise ValueError("rewrite_options %s: %r is not one of %s"
                                 % (name, value, ", ".join(TOGGLES)))
            value = TOGGLES[value.upper()]
        payload += _field(number, 0) + _varint(int(value))
    return payload


def encode_config(config):
    """Serializes a dict of ConfigProto fields, e.g. {"device_count": {"CPU": 2}}."""
    out = b""
    for name, value in config.items():
        if name not in FIELDS:
            raise ValueError("unknown ConfigProto field %r (known: %s)"
                             % (name, ", ".join(sorted(FIELDS))))
        number, kind = FIELDS[name]
        if kind == "int":
            out += _field(number, 0) + _varint(int(value))
        elif kind == "message":
            payload = b""
            for sub_name, sub_value in value.items():
                if sub_name not in SUBFIELDS[name]:
                    raise ValueError("unknown %s field %r (known: %s)"
                                     % (name, sub_name, ", ".join(sorted(SUBFIELDS[name]))))
                payload += _field(SUBFIELDS[name][sub_name], 0) + _varint(int(sub_value))
            out += _length_delimited(number, payload)
        elif kind == "placement":
            payload = b""
            for sub_name, sub_value in value.items():
                if sub_name == "policy":
                    payload += _length_delimited(1, str(sub_value).encode())
                elif sub_name == "device_map":
                    for rule in sub_value:
                        unknown = set(rule) - {"pattern", "device"}
                        if unknown:
                            raise ValueError("unknown device_map field %r (known: device, pattern)"
                                             % sorted(unknown)[0])
                        payload += _length_delimited(2, _length_delimited(1, rule.get("pattern", "").encode())
                                                     + _length_delimited(2, rule.get("device", "").encode()))
                else:
                    raise ValueError("unknown placement field %r (known: device_map, policy)" % sub_name)
            out += _length_delimited(number, payload)
        elif kind == "graph_options":
            unknown = set(value) - {"rewrite_options"}
            if unknown:
                raise ValueError("unknown graph_options field %r (known: rewrite_options)" % sorted(unknown)[0])
            out += _length_delimited(number, _length_delimited(10, _encode_rewriter(value.get("rewrite_options", {}))))
        elif kind == "repeated string":
            for s in value:
                out += _length_delimited(number, s.encode())
        else:
            for key, count in value.items():
                entry = _length_delimited(1, key.encode()) + _field(2, 0) + _varint(int(count))
                out += _length_delimited(number, entry)
    return out
