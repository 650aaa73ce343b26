"""ONNX Runtime's Python API on Sluice, as ONNX Runtime's documented examples use it (sessions
with options, providers, OrtValue, IOBinding on the CPU, run options, model metadata, its
exception classes), with only `import onnxruntime as ort` changed to `import sluice as ort`.
Written against ONNX Runtime's documented behaviour; every expected value comes from numpy or
from a second session, not from the code under test.
"""

import json
import os
import subprocess
import sys
import threading
import time
import unittest
import warnings

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto, helper

import sluice as ort
from sluice.capi.onnxruntime_pybind11_state import Fail, InvalidArgument, NoSuchFile, RuntimeException

ROOT = os.path.join(os.environ.get("TEST_SRCDIR", ""), os.environ.get("TEST_WORKSPACE", "sluice"))
MLP = os.path.join(ROOT, "tests/testdata/onnx/mlp.onnx")
CONV_BN = os.path.join(ROOT, "tests/testdata/onnx/conv_bn_relu.onnx")


def add_bias_model():
    """y = x @ w + b, with b an initializer that is also a graph input (overridable), and the
    metadata fields ONNX Runtime's ModelMetadata reads."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])
    b_in = helper.make_tensor_value_info("b", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])
    w = helper.make_tensor("w", TensorProto.FLOAT, [3, 4], np.arange(12, dtype=np.float32).tolist())
    b = helper.make_tensor("b", TensorProto.FLOAT, [4], [0.5, -1.0, 2.0, 0.25])
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["xw"]),
                               helper.make_node("Add", ["xw", "b"], ["y"])],
                              "bias_graph", [x, b_in], [y], [w, b], doc_string="adds a bias")
    model = helper.make_model(graph, producer_name="ort-api-test", producer_version="1.2",
                              domain="ai.sluice.test", model_version=7, doc_string="a test model",
                              opset_imports=[helper.make_opsetid("", 13)])
    helper.set_model_props(model, {"author": "sluice", "license": "none"})
    onnx.checker.check_model(model)
    return model.SerializeToString()


W = np.arange(12, dtype=np.float32).reshape(3, 4)
B = np.array([0.5, -1.0, 2.0, 0.25], np.float32)


class SessionOptionsTest(unittest.TestCase):

    def test_documented_session_setup(self):
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.log_severity_level = 3
        sess = ort.InferenceSession(MLP, sess_options=so, providers=ort.get_available_providers())
        x = np.random.default_rng(0).standard_normal((5, 2)).astype(np.float32)
        want = ort.InferenceSession(MLP).run(None, {"x": x})[0]
        got = sess.run(None, {sess.get_inputs()[0].name: x})[0]
        np.testing.assert_allclose(got, want, rtol=1e-6)
        self.assertIs(sess.get_session_options(), so)

    def test_every_level_and_mode_computes_the_same(self):
        x = np.random.default_rng(1).standard_normal((1, 2, 4, 4)).astype(np.float32)
        results = []
        for level in ort.GraphOptimizationLevel:
            for mode in ort.ExecutionMode:
                so = ort.SessionOptions()
                so.graph_optimization_level = level
                so.execution_mode = mode
                results.append(ort.InferenceSession(CONV_BN, so).run(None, {"x": x})[0])
        for r in results[1:]:
            np.testing.assert_allclose(r, results[0], rtol=1e-5, atol=1e-6)

    def test_levels_reach_the_optimizer(self):
        # The master logs what its passes rewrote (SLUICE_LOG_OPTIMIZER): nothing with
        # ORT_DISABLE_ALL, the BatchNormalization fold with the default level.
        script = ("import sys, numpy as np, sluice as ort\n"
                  "so = ort.SessionOptions()\n"
                  "so.graph_optimization_level = ort.GraphOptimizationLevel.%s\n"
                  "s = ort.InferenceSession(sys.argv[1], so)\n"
                  "s.run(None, {'x': np.zeros((1, 2, 4, 4), np.float32)})\n")
        env = dict(os.environ, SLUICE_LOG_OPTIMIZER="1")
        logs = {}
        for level in ("ORT_DISABLE_ALL", "ORT_ENABLE_ALL"):
            p = subprocess.run([sys.executable, "-c", script % level, CONV_BN], env=env,
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            logs[level] = p.stderr
        self.assertNotIn("fold_batch_norms", logs["ORT_DISABLE_ALL"])
        self.assertIn("fold_batch_norms 1", logs["ORT_ENABLE_ALL"])

    def test_config_entries(self):
        so = ort.SessionOptions()
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.assertEqual(so.get_session_config_entry("session.intra_op.allow_spinning"), "0")
        with self.assertRaises(InvalidArgument):
            so.get_session_config_entry("no.such.key")
        with self.assertRaises(InvalidArgument):
            so.add_session_config_entry("key", 3)

    def test_custom_ops_library(self):
        # An op library built against TensorFlow's C API (the examples' CountAbove), loaded by
        # register_custom_ops_library when the session is made: its op is then in the registry.
        tmp = os.environ.get("TEST_TMPDIR", "/tmp")
        lib = os.path.join(tmp, "libcount_above.so")
        subprocess.check_call(["cc", "-std=c11", "-shared", "-fPIC", "-I",
                               os.path.join(ROOT, "c_api/include"), "-o", lib,
                               os.path.join(ROOT, "examples/custom_op/count_above.c")])
        so = ort.SessionOptions()
        so.register_custom_ops_library(lib)
        ort.InferenceSession(MLP, so).run(None, {"x": np.ones((1, 2), np.float32)})
        g = ort.Graph()
        x = g.placeholder("x", np.float32, shape=(3,))
        count = g.op("CountAbove", [x], attrs={"threshold": 0.5})
        with ort.Session(g) as s:
            self.assertEqual(int(s.run(count, {x: np.array([0.1, 0.7, 0.9], np.float32)})), 2)
        with self.assertRaises(NoSuchFile):
            so.register_custom_ops_library(os.path.join(tmp, "no_such_library.so"))

    def test_optimized_model_filepath_writes_a_model_that_loads_and_computes_the_same(self):
        # ONNX Runtime's graph-optimizations page: set the path, make the session, load the
        # written model later. Sluice's holds its optimized GraphDef in one ai.sluice node.
        tmp = os.environ.get("TEST_TMPDIR", "/tmp")
        x = np.random.default_rng(3).standard_normal((1, 2, 4, 4)).astype(np.float32)
        want = ort.InferenceSession(CONV_BN).run(None, {"x": x})[0]
        sizes = {}
        for level in (ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
                      ort.GraphOptimizationLevel.ORT_ENABLE_ALL):
            so = ort.SessionOptions()
            so.graph_optimization_level = level
            so.optimized_model_filepath = os.path.join(tmp, "opt_%d.onnx" % int(level))
            with open(CONV_BN, "rb") as f:
                source = f.read() if level == ort.GraphOptimizationLevel.ORT_ENABLE_ALL else CONV_BN
            ort.InferenceSession(source, so)
            written = onnx.load(so.optimized_model_filepath)
            onnx.checker.check_model(written)
            self.assertEqual([n.domain for n in written.graph.node], ["ai.sluice"])
            self.assertEqual([i.name for i in written.graph.input], ["x"])
            self.assertEqual([o.name for o in written.graph.output], ["y"])
            graph_def = written.graph.node[0].attribute[0].s
            sizes[level] = graph_def
            reloaded = ort.InferenceSession(so.optimized_model_filepath)
            self.assertEqual(reloaded.get_inputs()[0].shape, [1, 2, 4, 4])
            np.testing.assert_allclose(reloaded.run(None, {"x": x})[0], want, rtol=1e-5, atol=1e-6)
        # The imported graph keeps its BatchNormalization; the optimized one has folded it.
        self.assertIn(b"BatchNormalization", sizes[ort.GraphOptimizationLevel.ORT_DISABLE_ALL])
        self.assertNotIn(b"BatchNormalization", sizes[ort.GraphOptimizationLevel.ORT_ENABLE_ALL])

    def test_optimized_model_keeps_the_metadata(self):
        tmp = os.environ.get("TEST_TMPDIR", "/tmp")
        so = ort.SessionOptions()
        so.optimized_model_filepath = os.path.join(tmp, "opt_meta.onnx")
        original = ort.InferenceSession(add_bias_model(), so)
        reloaded = ort.InferenceSession(so.optimized_model_filepath)
        a, b = original.get_modelmeta(), reloaded.get_modelmeta()
        for field in ("producer_name", "graph_name", "domain", "description", "version",
                      "custom_metadata_map"):
            self.assertEqual(getattr(a, field), getattr(b, field), field)
        x = np.ones((2, 3), np.float32)
        np.testing.assert_allclose(reloaded.run(None, {"x": x})[0], x @ W + B, rtol=1e-6)

    def test_optimized_model_filepath_that_cannot_be_written(self):
        so = ort.SessionOptions()
        so.optimized_model_filepath = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"),
                                                   "no_such_dir", "opt.onnx")
        with self.assertRaises(RuntimeException) as caught:
            ort.InferenceSession(MLP, so)
        self.assertIn("no_such_dir", str(caught.exception))

    def test_bad_thread_counts_are_refused(self):
        for bad in (-1, 1.5, "2"):
            so = ort.SessionOptions()
            so.intra_op_num_threads = bad
            with self.assertRaises(InvalidArgument):
                ort.InferenceSession(MLP, so)

    def test_add_initializer_overrides_the_models(self):
        model = add_bias_model()
        x = np.ones((2, 3), np.float32)
        sess = ort.InferenceSession(model)
        np.testing.assert_allclose(sess.run(None, {"x": x})[0], x @ W + B)
        so = ort.SessionOptions()
        new_b = np.full(4, 10.0, np.float32)
        so.add_initializer("b", ort.OrtValue.ortvalue_from_numpy(new_b))
        sess = ort.InferenceSession(model, so)
        np.testing.assert_allclose(sess.run(None, {"x": x})[0], x @ W + new_b)
        # A feed still wins over it, as for ONNX Runtime's overridable initializers.
        np.testing.assert_allclose(sess.run(None, {"x": x, "b": B})[0], x @ W + B)
        so = ort.SessionOptions()
        so.add_initializer("nope", ort.OrtValue.ortvalue_from_numpy(new_b))
        with self.assertRaisesRegex(InvalidArgument, "nope"):
            ort.InferenceSession(model, so)
        with self.assertRaises(InvalidArgument):
            so.add_initializer("b", new_b)  # Not an OrtValue.


class ProvidersTest(unittest.TestCase):

    def test_module_functions(self):
        self.assertEqual(ort.get_available_providers(), ["CPUExecutionProvider"])
        self.assertIn("CPUExecutionProvider", ort.get_all_providers())
        self.assertEqual(ort.get_device(), "CPU")
        self.assertEqual(ort.get_version_string(), ort.__version__)
        ort.set_default_logger_severity(3)
        with self.assertRaises(InvalidArgument):
            ort.set_default_logger_severity(9)

    def test_gpu_providers_fall_back_to_the_cpu_with_a_warning(self):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sess = ort.InferenceSession(MLP, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
        self.assertTrue(any("CUDAExecutionProvider" in str(w.message) for w in caught))
        self.assertEqual(sess.get_providers(), ["CPUExecutionProvider"])
        sess = ort.InferenceSession(MLP, providers=[("CPUExecutionProvider", {"arena_extend_strategy": "kSameAsRequested"})])
        self.assertEqual(sess.get_provider_options(),
                         {"CPUExecutionProvider": {"arena_extend_strategy": "kSameAsRequested"}})
        sess.set_providers(["CPUExecutionProvider"])
        self.assertEqual(sess.get_providers(), ["CPUExecutionProvider"])


class MetadataTest(unittest.TestCase):

    def test_modelmeta_from_bytes_and_from_a_file(self):
        model = add_bias_model()
        path = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), "bias.onnx")
        with open(path, "wb") as f:
            f.write(model)
        for source in (model, path):
            meta = ort.InferenceSession(source).get_modelmeta()
            self.assertEqual(meta.producer_name, "ort-api-test")
            self.assertEqual(meta.graph_name, "bias_graph")
            self.assertEqual(meta.domain, "ai.sluice.test")
            self.assertEqual(meta.description, "a test model")
            self.assertEqual(meta.graph_description, "adds a bias")
            self.assertEqual(meta.version, 7)
            self.assertEqual(meta.custom_metadata_map, {"author": "sluice", "license": "none"})

    def test_damaged_bytes_are_an_invalid_argument(self):
        model = add_bias_model()
        for damaged in (model[:len(model) // 2], b"\x0a\xff\xff\xff\xff\x7f", b"\x07"):
            with self.assertRaises(InvalidArgument):
                ort.ort_api.read_model_metadata(damaged)


class OrtValueTest(unittest.TestCase):

    def test_from_numpy_shares_memory(self):
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        v = ort.OrtValue.ortvalue_from_numpy(x)
        self.assertEqual(v.shape(), [2, 3])
        self.assertEqual(v.data_type(), "tensor(float)")
        self.assertEqual(v.element_type(), TensorProto.FLOAT)
        self.assertTrue(v.is_tensor())
        self.assertEqual(v.device_name(), "cpu")
        x[0, 0] = 42
        self.assertEqual(v.numpy()[0, 0], 42)
        self.assertEqual(v.data_ptr(), x.ctypes.data)
        v.update_inplace(np.zeros((2, 3), np.float32))
        self.assertEqual(x.sum(), 0)
        with self.assertRaises(InvalidArgument):
            v.update_inplace(np.zeros((3, 2), np.float32))

    def test_from_shape_and_type(self):
        v = ort.OrtValue.ortvalue_from_shape_and_type([3, 2], np.int64)
        self.assertEqual(v.shape(), [3, 2])
        self.assertEqual(v.element_type(), TensorProto.INT64)
        for bad in (([-1, 2], np.float32), ([2], object), ([2.5], np.float32)):
            with self.assertRaises(InvalidArgument):
                ort.OrtValue.ortvalue_from_shape_and_type(*bad)
        with self.assertRaises(InvalidArgument):
            ort.OrtValue.ortvalue_from_numpy(np.zeros(2, np.float32), "cuda", 0)
        with self.assertRaises(InvalidArgument):
            ort.OrtValue.ortvalue_from_numpy([1.0, 2.0])

    def test_run_takes_ort_values(self):
        sess = ort.InferenceSession(MLP)
        x = np.random.default_rng(7).standard_normal((3, 2)).astype(np.float32)
        np.testing.assert_allclose(sess.run(["y"], {"x": ort.OrtValue.ortvalue_from_numpy(x)})[0],
                                   sess.run(["y"], {"x": x})[0])

    def test_run_with_ort_values(self):
        sess = ort.InferenceSession(MLP)
        x = np.random.default_rng(2).standard_normal((4, 2)).astype(np.float32)
        got = sess.run_with_ort_values(None, {"x": ort.OrtValue.ortvalue_from_numpy(x)})
        self.assertIsInstance(got[0], ort.OrtValue)
        np.testing.assert_allclose(got[0].numpy(), sess.run(None, {"x": x})[0], rtol=1e-6)
        with self.assertRaisesRegex(InvalidArgument, "'x'"):
            sess.run_with_ort_values(None, {"x": x})
        with self.assertRaisesRegex(InvalidArgument, "'x'"):
            sess.run_with_ort_values(None, {"x": ort.OrtValue.ortvalue_from_numpy(x.astype(np.float64))})


class IOBindingTest(unittest.TestCase):

    def setUp(self):
        self.sess = ort.InferenceSession(add_bias_model())
        self.x = np.random.default_rng(3).standard_normal((2, 3)).astype(np.float32)
        self.want = self.x @ W + B

    def test_bind_cpu_input_and_output(self):
        binding = self.sess.io_binding()
        binding.bind_cpu_input("x", self.x)
        binding.bind_output("y")
        self.sess.run_with_iobinding(binding)
        np.testing.assert_allclose(binding.copy_outputs_to_cpu()[0], self.want, rtol=1e-6)
        self.assertEqual(binding.get_outputs()[0].shape(), [2, 4])

    def test_preallocated_outputs_are_written_in_place(self):
        out = ort.OrtValue.ortvalue_from_shape_and_type([2, 4], np.float32)
        binding = self.sess.io_binding()
        binding.bind_ortvalue_input("x", ort.OrtValue.ortvalue_from_numpy(self.x))
        binding.bind_ortvalue_output("y", out)
        self.sess.run_with_iobinding(binding)
        np.testing.assert_allclose(out.numpy(), self.want, rtol=1e-6)
        self.assertIs(binding.get_outputs()[0], out)

    def test_raw_buffers(self):
        y = np.zeros((2, 4), np.float32)
        binding = self.sess.io_binding()
        binding.bind_input("x", "cpu", 0, np.float32, [2, 3], self.x.ctypes.data)
        binding.bind_output("y", "cpu", 0, np.float32, [2, 4], y.ctypes.data)
        self.sess.run_with_iobinding(binding)
        np.testing.assert_allclose(y, self.want, rtol=1e-6)
        binding.clear_binding_outputs()
        with self.assertRaises(InvalidArgument):
            self.sess.run_with_iobinding(binding)  # No output bound.

    def test_misuse_names_the_value(self):
        binding = self.sess.io_binding()
        with self.assertRaisesRegex(InvalidArgument, "'nope'"):
            binding.bind_cpu_input("nope", self.x)
        with self.assertRaisesRegex(InvalidArgument, "'nope'"):
            binding.bind_output("nope")
        with self.assertRaises(InvalidArgument):
            binding.bind_input("x", "cuda", 0, np.float32, [2, 3], self.x.ctypes.data)
        with self.assertRaises(InvalidArgument):
            binding.bind_input("x", "cpu", 0, np.float32, [2, 3], 0)
        for hostile in ([2 ** 62], [-1, 3], [2 ** 31, 2 ** 31]):  # Never read past the buffer.
            with self.assertRaises(InvalidArgument):
                binding.bind_input("x", "cpu", 0, np.float32, hostile, self.x.ctypes.data)
        binding.bind_cpu_input("x", self.x)
        binding.bind_ortvalue_output("y", ort.OrtValue.ortvalue_from_shape_and_type([4, 2], np.float32))
        with self.assertRaisesRegex(InvalidArgument, "'y'"):
            self.sess.run_with_iobinding(binding)
        binding.bind_cpu_input("x", self.x.astype(np.int32))
        binding.bind_output("y")
        with self.assertRaisesRegex(InvalidArgument, "'x'"):
            self.sess.run_with_iobinding(binding)
        with self.assertRaises(InvalidArgument):
            ort.InferenceSession(MLP).run_with_iobinding(binding)  # Another session's binding.


class ProfilingTest(unittest.TestCase):

    def test_profile_is_a_chrome_trace_of_every_run_and_node(self):
        so = ort.SessionOptions()
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), "prof")
        sess = ort.InferenceSession(CONV_BN, so)
        self.assertGreater(sess.get_profiling_start_time_ns(), 0)
        x = np.random.default_rng(5).standard_normal((1, 2, 4, 4)).astype(np.float32)
        ro = ort.RunOptions()
        ro.run_tag = "second"
        sess.run(None, {"x": x})
        sess.run(None, {"x": x}, ro)
        path = sess.end_profiling()
        self.assertTrue(path.startswith(so.profile_file_prefix) and path.endswith(".json"), path)
        with open(path) as f:
            events = json.load(f)
        self.assertIsInstance(events, list)
        for e in events:
            self.assertEqual(e["ph"], "X")
            for key in ("cat", "pid", "tid", "dur", "ts", "name", "args"):
                self.assertIn(key, e)
        runs = [e for e in events if e["cat"] == "Session" and e["name"] == "model_run"]
        self.assertEqual(len(runs), 2)
        self.assertEqual(runs[1]["args"].get("run_tag"), "second")
        self.assertEqual(sum(e["name"] == "session_initialization" for e in events), 1)
        nodes = [e for e in events if e["cat"] == "Node"]
        # Every node of each run is in the trace, inside its run's span: both runs ran the same
        # nodes, and the graph's convolution (its BatchNormalization and ReLU folded in) is one.
        per_run = [[n for n in nodes if r["ts"] - 1 <= n["ts"] and n["ts"] + n["dur"] <= r["ts"] + r["dur"] + 1]
                   for r in runs]
        self.assertTrue(per_run[0] and per_run[1])
        self.assertEqual(sorted(n["name"] for n in per_run[0]), sorted(n["name"] for n in per_run[1]))
        self.assertEqual(len(per_run[0]) + len(per_run[1]), len(nodes))
        self.assertTrue(any("Conv" in n["args"]["op_name"] for n in nodes), [n["args"] for n in nodes])
        self.assertTrue(all(n["name"].endswith("_kernel_time") and n["dur"] >= 0 for n in nodes))
        # Ended: later runs are not profiled, and a second end writes nothing.
        sess.run(None, {"x": x})
        self.assertEqual(sess.end_profiling(), "")

    def test_no_profile_unless_enabled(self):
        sess = ort.InferenceSession(MLP)
        sess.run(None, {"x": np.ones((1, 2), np.float32)})
        self.assertEqual(sess.end_profiling(), "")

    def test_step_events_of_damaged_metadata(self):
        with self.assertRaises(InvalidArgument):
            ort.ort_api.step_events(b"\x0a\x05\x0a\x10", 0, 1)


class RunOptionsAndErrorsTest(unittest.TestCase):

    def test_terminate_before_a_run(self):
        sess = ort.InferenceSession(MLP)
        ro = ort.RunOptions()
        ro.run_tag = "tagged"
        ro.log_severity_level = 3
        x = np.ones((1, 2), np.float32)
        sess.run(None, {"x": x}, ro)
        ro.terminate = True
        with self.assertRaisesRegex(Fail, "terminate flag"):
            sess.run(None, {"x": x}, ro)
        ro.terminate = False
        sess.run(None, {"x": x}, ro)

    def test_terminate_from_another_thread_ends_a_long_run(self):
        # 60 products of 1024x1024 matrices on one thread: seconds of work, stopped within a
        # second of terminate, between two nodes, with ORT's message.
        n, depth = 1024, 60
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, n])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, n])
        w = np.random.default_rng(6).standard_normal((n, n)).astype(np.float32) / n
        nodes = [helper.make_node("MatMul", ["x" if i == 0 else "h%d" % (i - 1), "w"],
                                  ["y" if i == depth - 1 else "h%d" % i]) for i in range(depth)]
        model = helper.make_model(helper.make_graph(nodes, "long", [x], [y],
                                                    [onnx.numpy_helper.from_array(w, "w")]),
                                  opset_imports=[helper.make_opsetid("", 13)])
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        sess = ort.InferenceSession(model.SerializeToString(), so)
        feeds = {"x": np.ones((n, n), np.float32)}
        ro = ort.RunOptions()
        outcome = {}

        def run():
            try:
                sess.run(None, feeds, ro)
                outcome["result"] = "finished"
            except Fail as e:
                outcome["error"] = e
            outcome["end"] = time.monotonic()

        t = threading.Thread(target=run)
        t.start()
        time.sleep(0.5)
        self.assertTrue(t.is_alive(), "the run ended before terminate: make it longer")
        ro.terminate = True
        asked = time.monotonic()
        t.join(10)
        self.assertFalse(t.is_alive())
        self.assertIn("error", outcome, outcome)
        self.assertIsInstance(outcome["error"], ort.CancelledError)
        self.assertIn("terminate flag", str(outcome["error"]))
        self.assertLess(outcome["end"] - asked, 1.0)
        # Still set: the next run fails at once; cleared, the session runs again.
        with self.assertRaisesRegex(Fail, "terminate flag"):
            sess.run(None, feeds, ro)
        ro.terminate = False
        small = ort.InferenceSession(MLP)
        small.run(None, {"x": np.ones((1, 2), np.float32)}, ro)

    def test_ort_exception_names(self):
        with self.assertRaises(NoSuchFile):
            ort.InferenceSession(os.path.join(ROOT, "no_such_model.onnx"))
        sess = ort.InferenceSession(MLP)
        with self.assertRaisesRegex(InvalidArgument, "'nope'"):
            sess.run(None, {"nope": np.ones((1, 2), np.float32)})
        with self.assertRaisesRegex(InvalidArgument, "'x'"):
            sess.run(None, {"x": np.ones((1, 2), np.int64)})
        with self.assertRaisesRegex(InvalidArgument, "'x'"):
            sess.run(None, {"x": np.ones((1, 2, 3), np.float32)})
        with self.assertRaises(RuntimeException):
            sess.run(None, {})
        with self.assertRaises(InvalidArgument):
            ort.InferenceSession(b"not a model at all")

    def test_runs_from_several_threads(self):
        sess = ort.InferenceSession(MLP)
        x = np.random.default_rng(4).standard_normal((3, 2)).astype(np.float32)
        want = sess.run(None, {"x": x})[0]
        errors = []

        def worker():
            try:
                for _ in range(20):
                    np.testing.assert_allclose(
                        sess.run_with_ort_values(None, {"x": ort.OrtValue.ortvalue_from_numpy(x)})[0].numpy(), want)
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(e)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])


if __name__ == "__main__":
    unittest.main()
