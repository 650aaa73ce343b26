"""Tests of the Python binding: numbers computed by hand, errors with their TF codes, feeds by
name and by Output, GraphDef round trips and memory sharing. Run with Debian's /usr/bin/python3
(it has numpy), SLUICE_C_LIBRARY pointing at libsluice_c.so and this folder on PYTHONPATH."""

import gc
import threading
import os
import unittest

import numpy as np

import sluice

# y = Relu(x W + b) with W = [[1, 2], [3, 4]], b = [0.5, -10].
W = [[1, 2], [3, 4]]
B = [0.5, -10]


def build_model(g):
    x = g.placeholder("x", np.float32, shape=(None, 2))
    w = g.constant(W, name="W", dtype=np.float32)
    b = g.constant(B, name="b")  # Python floats: float32.
    mm = g.op("MatMul", [x, w], name="mm")
    y = g.op("Relu", [g.op("Add", [mm, b], name="add")], name="y")
    return x, mm, y


class NumericsTest(unittest.TestCase):

    def setUp(self):
        self.g = sluice.Graph()
        self.x, self.mm, self.y = build_model(self.g)

    def test_three_runs_with_different_feeds(self):
        with sluice.Session(self.g) as sess:
            out = sess.run(self.y, {self.x: np.eye(2, dtype=np.float32)})
            np.testing.assert_allclose(out, [[1.5, 0], [3.5, 0]])
            self.assertEqual(out.dtype, np.float32)

            out = sess.run("y:0", {"x:0": [[1, 1]]})  # By name; a Python list feed.
            np.testing.assert_allclose(out, [[4.5, 0]])

            y, mm = sess.run([self.y, "mm"], {"x": np.array([[2, 3], [-1, 0], [0, 5]], np.float32)})
            np.testing.assert_allclose(mm, [[11, 16], [-1, -2], [15, 20]])
            np.testing.assert_allclose(y, [[11.5, 6], [0, 0], [15.5, 10]])

    def test_shapes_and_types(self):
        self.assertEqual(self.x.shape, (None, 2))
        self.assertEqual(self.y.shape, (None, 2))
        self.assertEqual(self.g.output("W:0").shape, (2, 2))
        self.assertEqual(self.y.dtype, np.float32)
        unknown = self.g.placeholder("any", np.int32)
        self.assertIsNone(unknown.shape)
        self.assertEqual([op.name for op in self.g.operations()],
                         ["x", "W", "b", "mm", "add", "y", "any"])
        self.assertEqual(self.g.operation("mm").type, "MatMul")
        self.assertEqual(self.g.operation("mm").num_inputs, 2)
        self.assertIn("add", self.g)
        self.assertNotIn("nope", self.g)
        with self.assertRaises(KeyError):
            self.g.operation("nope")

    def test_list_args_multiple_outputs_and_targets(self):
        g = sluice.Graph()
        a = g.placeholder("a", np.float64)
        n = g.placeholder("n", np.int64)
        total = g.op("AddN", [[a, a, a]], name="total")  # N and T inferred.
        pair = g.op("IdentityN", [[a, n]], name="pair")
        self.assertEqual(len(pair), 2)
        self.assertEqual(pair[1].dtype, np.int64)
        barrier = g.op("NoOp", [], name="barrier", control_inputs=[total])
        self.assertIsInstance(barrier, sluice.Operation)
        with sluice.Session(g) as sess:
            t, p1, none = sess.run([total, pair[1], barrier],
                                   {a: np.array([1.5, 2.0]), n: np.int64(7)})
            np.testing.assert_allclose(t, [4.5, 6.0])
            self.assertEqual(t.dtype, np.float64)
            self.assertEqual(p1, 7)
            self.assertEqual(p1.shape, ())
            self.assertIsNone(none)

    def test_extend_after_run(self):
        with sluice.Session(self.g) as sess:
            sess.run(self.y, {self.x: [[0, 0]]})
            z = self.g.op("AddN", [[self.y, self.y]], name="z")
            np.testing.assert_allclose(sess.run(z, {self.x: [[1, 1]]}), [[9, 0]])

    def test_feeds_are_copied_and_outputs_outlive_the_session(self):
        g = sluice.Graph()
        x = g.placeholder("x", np.float32)
        ident = g.op("Identity", [x])
        sess = sluice.Session(g)
        fed = np.arange(6, dtype=np.float32).reshape(2, 3)
        out = sess.run(ident, {x: fed})
        # The runtime got its own copy of the feed: writing to the array later changes nothing.
        self.assertNotEqual(out.ctypes.data, fed.ctypes.data)
        self.assertFalse(out.flags.writeable)
        fed[:] = -1
        del fed
        sess.close()
        del sess, g
        gc.collect()
        np.testing.assert_allclose(out, [[0, 1, 2], [3, 4, 5]])

    def test_graph_def_round_trip_and_prefix(self):
        data = self.g.as_graph_def()
        self.assertIsInstance(data, bytes)
        g2 = sluice.Graph()
        g2.import_graph_def(data)
        g2.import_graph_def(data, prefix="copy")
        self.assertIn("copy/y", g2)
        with sluice.Session(g2) as sess:
            y, cy = sess.run(["y:0", "copy/y:0"], {"x:0": [[1, 1]], "copy/x:0": [[2, 3]]})
            np.testing.assert_allclose(y, [[4.5, 0]])
            np.testing.assert_allclose(cy, [[11.5, 6]])

    def test_config_and_devices(self):
        with sluice.Session(self.g, config={"device_count": {"CPU": 2}}) as sess:
            devices = sess.list_devices()
            self.assertEqual(len(devices), 2)
            self.assertTrue(all(d.device_type == "CPU" for d in devices))
            np.testing.assert_allclose(sess.run(self.y, {self.x: [[1, 0]]}), [[1.5, 0]])

    def test_concurrent_runs(self):
        sess = sluice.Session(self.g)
        errors = []

        def worker(k):
            try:
                for i in range(20):
                    v = float(i + k)
                    out = sess.run(self.mm, {self.x: [[v, 0]]})
                    np.testing.assert_allclose(out, [[v, 2 * v]])
            except Exception as e:  # Reported on the main thread.
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        sess.close()
        self.assertEqual(errors, [])


class StringTest(unittest.TestCase):

    def test_strings_feed_fetch_and_constants(self):
        g = sluice.Graph()
        x = g.placeholder("x", object)
        y = g.op("Identity", [x], name="y")
        c = g.constant(np.array([b"const", u"text \u00e9"], dtype=object), name="c")
        u = g.constant(["unicode", "array"], name="u")  # A "U" array: strings too.
        self.assertEqual(x.dtype, np.dtype(object))
        self.assertEqual(c.dtype, np.dtype(object))
        big = b"L" * 1000
        fed = np.array([[b"small", big], [b"nul\x00inside", u"\u00e9t\u00e9"]], dtype=object)
        with sluice.Session(g) as sess:
            out, cv, uv = sess.run([y, c, u], {x: fed})
            self.assertEqual(out.dtype, np.dtype(object))
            self.assertEqual(out.shape, (2, 2))
            self.assertEqual(out.tolist(), [[b"small", big],
                                            [b"nul\x00inside", u"\u00e9t\u00e9".encode("utf-8")]])
            self.assertEqual(cv.tolist(), [b"const", u"text \u00e9".encode("utf-8")])
            self.assertEqual(uv.tolist(), [b"unicode", b"array"])
            # np.bytes_ arrays, Python lists and scalars feed too.
            self.assertEqual(sess.run(y, {x: np.array([b"a", b"bc"])}).tolist(), [b"a", b"bc"])
            self.assertEqual(sess.run(y, {"x": ["p", "q"]}).tolist(), [b"p", b"q"])
            self.assertEqual(sess.run(y, {x: b"one"}).tolist(), b"one")
            self.assertEqual(sess.run(y, {x: np.array([], dtype=object)}).shape, (0,))
            with self.assertRaises(TypeError):
                sess.run(y, {x: np.array([1, 2], dtype=object)})


class ErrorTest(unittest.TestCase):

    def setUp(self):
        self.g = sluice.Graph()
        self.x, self.mm, self.y = build_model(self.g)
        self.sess = sluice.Session(self.g)

    def tearDown(self):
        self.sess.close()

    def assertError(self, cls, code, fn, *substrings):
        with self.assertRaises(cls) as cm:
            fn()
        e = cm.exception
        self.assertIsInstance(e, sluice.SluiceError)
        self.assertEqual(e.code, code)
        self.assertTrue(e.message)
        for s in substrings:
            self.assertIn(s, e.message)
        return e

    def test_wrong_dtype_feed(self):
        self.assertError(sluice.InvalidArgumentError, 3,
                         lambda: self.sess.run(self.y, {self.x: np.ones((1, 2), np.int32)}),
                         "x:0", "int32")

    def test_wrong_shape_feed(self):
        self.assertError(sluice.InvalidArgumentError, 3,
                         lambda: self.sess.run(self.y, {self.x: np.ones((2, 3), np.float32)}),
                         "x")

    def test_missing_feed(self):
        self.assertError(sluice.InvalidArgumentError, 3, lambda: self.sess.run(self.y), "x")

    def test_bad_output_index(self):
        self.assertError(sluice.InvalidArgumentError, 3,
                         lambda: self.sess.run("y:1", {self.x: [[1, 1]]}), "'y'")

    def test_unknown_op(self):
        self.assertError(sluice.NotFoundError, 5, lambda: self.g.op("NoSuchOp", [self.x]),
                         "NoSuchOp")
        self.assertNotIn("NoSuchOp", self.g)

    def test_bad_graph_construction(self):
        self.assertError(sluice.InvalidArgumentError, 3,
                         lambda: self.g.op("Relu", [self.x], name="y"), "y")
        self.assertError(sluice.InvalidArgumentError, 3,
                         lambda: self.g.op("MatMul", ["W", "b"], name="bad_mm"), "bad_mm")
        self.assertError(sluice.InvalidArgumentError, 3,
                         lambda: self.g.op("Add", [self.x, np.int32(1)], name="mixed"), "mixed")
        with self.assertRaises(TypeError):
            self.g.op("Relu", [self.x], name="odd_attr", attrs={"T": object()})
        self.assertNotIn("odd_attr", self.g)

    def test_garbage_graph_def(self):
        before = len(self.g.operations())
        self.assertError(sluice.InvalidArgumentError, 3,
                         lambda: self.g.import_graph_def(b"\xff\xff\xff\xff not a graph"),
                         "GraphDef")
        self.assertEqual(len(self.g.operations()), before)
        self.assertError(sluice.InvalidArgumentError, 3,
                         lambda: self.g.import_graph_def(self.g.as_graph_def()), "already exists")

    def test_closed_session(self):
        self.sess.close()
        self.assertError(sluice.FailedPreconditionError, 9,
                         lambda: self.sess.run(self.y, {self.x: [[1, 1]]}), "closed")

    def test_bad_target_and_config(self):
        self.assertError(sluice.InvalidArgumentError, 3,
                         lambda: sluice.Session(self.g, target="bogus://x"), "bogus://x")
        self.assertError(sluice.InvalidArgumentError, 3,
                         lambda: sluice.Session(self.g, config=b"\xff\xff"), "ConfigProto")
        with self.assertRaises(ValueError):
            sluice.Session(self.g, config={"no_such_field": 1})

    def test_error_str_has_code(self):
        e = self.assertError(sluice.NotFoundError, 5, lambda: self.g.op("Nope", []))
        self.assertIn("code 5", str(e))


MODELS = os.path.join(os.environ.get("TEST_SRCDIR", ""), os.environ.get("TEST_WORKSPACE", "sluice"),
                      "tests", "testdata", "onnx")


class OnnxImportTest(unittest.TestCase):

    def test_import_by_path_and_run(self):
        g = sluice.Graph()
        m = g.import_onnx(os.path.join(MODELS, "mlp.onnx"))
        self.assertEqual(list(m.inputs), ["x"])
        self.assertEqual(list(m.outputs), ["y"])
        with sluice.Session(g) as sess:
            y = sess.run(m.outputs["y"], {m.inputs["x"]: np.array([[1, 2], [3, 4]], np.float32)})
        # relu(x @ [[1, -1], [2, 1]] + [0.5, -10]), worked by hand.
        np.testing.assert_allclose(y, [[5.5, 0], [11.5, 0]])

    def test_import_bytes_with_subgraphs(self):
        with open(os.path.join(MODELS, "if.onnx"), "rb") as f:
            data = f.read()
        g = sluice.Graph()
        m = g.import_onnx(data, prefix="m")
        self.assertTrue(m.outputs["y"].name.startswith("m/"))
        with sluice.Session(g) as sess:
            x = np.array([3, -4], np.float32)
            np.testing.assert_allclose(sess.run(m.outputs["y"], {m.inputs["c"]: np.array(True), m.inputs["x"]: x}), [4, -3])
            np.testing.assert_allclose(sess.run(m.outputs["y"], {m.inputs["c"]: np.array(False), m.inputs["x"]: x}), [6, -8])

    def test_bad_models_raise_with_codes(self):
        g = sluice.Graph()
        with self.assertRaises(sluice.InvalidArgumentError) as e:
            g.import_onnx(b"not a model")
        self.assertEqual(e.exception.code, 3)
        with self.assertRaises(sluice.NotFoundError):
            g.import_onnx(os.path.join(MODELS, "missing.onnx"))
        with self.assertRaises(sluice.SluiceError) as e:
            g.import_onnx(os.path.join(MODELS, "bad_unknown_op.onnx"))
        self.assertIn("mystery", str(e.exception))
        self.assertEqual(g.operations(), [])


class TrainerTest(unittest.TestCase):

    def test_trains_like_numpy(self):
        import tempfile
        from onnx import numpy_helper  # Debian's python3-onnx, installed by setup.
        def load(name):
            import onnx
            t = onnx.TensorProto()
            with open(os.path.join(MODELS, name), "rb") as f:
                t.ParseFromString(f.read())
            return numpy_helper.to_array(t)
        with open(os.path.join(MODELS, "train_linear_expected.txt")) as f:
            losses = [float(v) for v in f.readline().split()]
        trainer = sluice.Trainer(os.path.join(MODELS, "train_linear.onnx"))
        trainer.initialize()
        feeds = {"x": load("train_linear_x.pb"), "t": load("train_linear_t.pb")}
        for want in losses:
            out = trainer.step(feeds)
            self.assertAlmostEqual(float(out["loss"]), want, delta=1e-4 * max(1, want))
        with tempfile.TemporaryDirectory() as d:
            trainer.save(os.path.join(d, "trained.onnx"))
            self.assertTrue(os.path.getsize(os.path.join(d, "trained.onnx")) > 0)

    def test_errors(self):
        with self.assertRaises(sluice.InvalidArgumentError):
            sluice.Trainer(os.path.join(MODELS, "mlp.onnx"))
        trainer = sluice.Trainer(os.path.join(MODELS, "train_linear.onnx"))
        with self.assertRaises(sluice.InvalidArgumentError) as e:
            trainer.step({})
        self.assertIn("no value for input", str(e.exception))


if __name__ == "__main__":
    unittest.main(verbosity=2)
