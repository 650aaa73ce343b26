"""One progress line on a terminal for the model export scripts, as `sluice test-onnx`,
`bench` and `train` show theirs (tools/progress.h): rewritten in place on stderr when stderr
is a terminal, nothing at all otherwise, so logs and pipes stay quiet.

    progress = ProgressLine("export")
    for i, name in enumerate(names):
        progress.update("%d/%d %s" % (i + 1, len(names), name))
    progress.done()
"""
import sys


class ProgressLine(object):
    def __init__(self, label, stream=None):
        self.stream = stream or sys.stderr
        self.label = label
        self.active = self.stream.isatty()
        self.shown = False

    def update(self, text):
        if self.active:
            self.stream.write("\r\033[K%s: %s" % (self.label, text))
            self.stream.flush()
            self.shown = True

    def done(self):
        """Erases the line."""
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False
