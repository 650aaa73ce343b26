"""sluice.InferenceSession (ONNX Runtime's API shape): metadata, runs against the
TensorFlow-style Graph/Session path and against torch, errors, threads, and the type stubs."""

import ast
import io
import os
import threading
import unittest

import numpy as np

import sluice

ROOT = os.path.join(os.environ.get("TEST_SRCDIR", ""), os.environ.get("TEST_WORKSPACE", "sluice"))
MLP = os.path.join(ROOT, "tests/testdata/onnx/mlp.onnx")
IF_MODEL = os.path.join(ROOT, "tests/testdata/onnx/if.onnx")


def torch_model():
    """A small CNN exported by torch with a named dynamic batch dim, and the torch module."""
    import torch
    torch.manual_seed(0)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.bn = torch.nn.BatchNorm2d(8)
            self.fc = torch.nn.Linear(8, 5)

        def forward(self, x):
            y = torch.relu(self.bn(self.conv(x)))
            return torch.softmax(self.fc(y.mean(dim=(2, 3))), dim=1), y.amax(dim=1)

    net = Net().eval()
    with torch.no_grad():  # Non-trivial BatchNorm statistics.
        net.bn.running_mean.uniform_(-0.5, 0.5)
        net.bn.running_var.uniform_(0.5, 2.0)
    buf = io.BytesIO()
    torch.onnx.export(net, torch.zeros(1, 3, 16, 16), buf, opset_version=13,
                      input_names=["image"], output_names=["probs", "peak"],
                      dynamic_axes={"image": {0: "batch"}, "probs": {0: "batch"},
                                    "peak": {0: "batch"}})
    return buf.getvalue(), net


class InferenceSessionTest(unittest.TestCase):

    def test_metadata_of_a_model_with_a_symbolic_batch(self):
        sess = sluice.InferenceSession(MLP)
        self.assertEqual(sess.get_inputs(), [sluice.NodeArg("x", ["N", 2], "tensor(float)")])
        self.assertEqual(sess.get_outputs(), [sluice.NodeArg("y", ["N", 2], "tensor(float)")])
        self.assertEqual(sess.get_inputs()[0].dtype, np.float32)
        self.assertEqual(sess.get_overridable_initializers(), [])
        self.assertEqual(sess.model_path, MLP)

    def test_runs_the_same_as_graph_and_session(self):
        x = np.array([[1, 2], [3, 4], [-1, 0.5]], np.float32)
        sess = sluice.InferenceSession(MLP, threads=1)
        (y,) = sess.run(None, {"x": x})
        g = sluice.Graph()
        model = g.import_onnx(MLP)
        with sluice.Session(g) as tf_sess:
            expected = tf_sess.run(model.outputs["y"], {model.inputs["x"]: x})
        np.testing.assert_array_equal(y, expected)
        # relu(x @ [[1, -1], [2, 1]] + [0.5, -10]), computed here.
        np.testing.assert_allclose(
            y, np.maximum(x @ np.array([[1, -1], [2, 1]], np.float32) + [0.5, -10], 0))
        self.assertTrue(y.flags.writeable, "run returns arrays the caller owns")

    def test_bytes_and_output_selection(self):
        with open(IF_MODEL, "rb") as f:
            sess = sluice.InferenceSession(f.read())
        self.assertIsNone(sess.model_path)
        names = [o.name for o in sess.get_outputs()]
        feeds = {}
        for arg in sess.get_inputs():
            shape = [d if isinstance(d, int) else 2 for d in (arg.shape or [])]
            feeds[arg.name] = (np.ones(shape, arg.dtype) if arg.dtype != np.bool_
                               else np.array(True))
        everything = sess.run(None, feeds)
        self.assertEqual(len(everything), len(names))
        last = sess.run([names[-1]], feeds)
        np.testing.assert_array_equal(last[0], everything[-1])

    def test_matches_torch(self):
        data, net = torch_model()
        import torch
        sess = sluice.InferenceSession(data, threads=2)
        (image,) = sess.get_inputs()
        self.assertEqual(image.name, "image")
        self.assertEqual(image.shape, ["batch", 3, 16, 16])
        self.assertEqual([o.name for o in sess.get_outputs()], ["probs", "peak"])
        x = np.random.RandomState(3).standard_normal((4, 3, 16, 16)).astype(np.float32)
        probs, peak = sess.run(None, {"image": x})
        with torch.no_grad():
            want_probs, want_peak = net(torch.from_numpy(x))
        np.testing.assert_allclose(probs, want_probs.numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(peak, want_peak.numpy(), rtol=1e-4, atol=1e-5)

    def test_errors_name_the_input(self):
        sess = sluice.InferenceSession(MLP)
        ok = np.zeros((1, 2), np.float32)
        cases = [
            ({"x": ok, "nope": ok}, None, "nope"),
            ({"x": np.zeros((1, 2), np.float64)}, None, "float64"),
            ({"x": np.zeros((1, 3), np.float32)}, None, "[N, 2]"),
            ({"x": np.zeros((2,), np.float32)}, None, "shape"),
            ({}, None, "missing input: x"),
            ({"x": ok}, ["y", "z"], "no output named 'z'"),
        ]
        for feeds, outputs, text in cases:
            with self.assertRaises(sluice.InvalidArgumentError) as ctx:
                sess.run(outputs, feeds)
            self.assertIn(text, str(ctx.exception))
            self.assertEqual(ctx.exception.code, 3)
        with self.assertRaises(sluice.NotFoundError):
            sluice.InferenceSession(os.path.join(ROOT, "no/such/model.onnx"))
        with self.assertRaises(sluice.SluiceError):
            sluice.InferenceSession(b"not a model")
        with self.assertRaises(TypeError):
            sluice.InferenceSession(42)

    def test_python_values_take_the_input_type(self):
        sess = sluice.InferenceSession(MLP)
        (y,) = sess.run(["y"], {"x": [[1, 2]]})
        np.testing.assert_allclose(y, [[5.5, 0]])

    def test_threads_share_a_session(self):
        data, net = torch_model()
        sess = sluice.InferenceSession(data)
        rng = np.random.RandomState(5)
        inputs = [rng.standard_normal((2, 3, 16, 16)).astype(np.float32) for _ in range(4)]
        expected = [sess.run(["probs"], {"image": x})[0] for x in inputs]
        failures = []

        def worker(i):
            for _ in range(15):
                (got,) = sess.run(["probs"], {"image": inputs[i]})
                if not np.array_equal(got, expected[i]):
                    failures.append(i)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(failures, [])

    def test_stubs_cover_the_package(self):
        stub = os.path.join(os.path.dirname(sluice.__file__), "__init__.pyi")
        with open(stub) as f:
            tree = ast.parse(f.read())
        declared = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
        declared |= {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)}
        self.assertEqual(sorted(set(sluice.__all__) - declared), [], "names without a stub")
        self.assertEqual(sorted(n for n in declared if not hasattr(sluice, n)), [],
                         "stubs of names the package lacks")
        for cls in ("InferenceSession", "Graph", "Session"):
            stub_cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
            for fn in stub_cls.body:
                if isinstance(fn, ast.FunctionDef):
                    self.assertTrue(hasattr(getattr(sluice, cls), fn.name), cls + "." + fn.name)
        self.assertEqual(sluice.__version__, sluice.version())


if __name__ == "__main__":
    unittest.main()
