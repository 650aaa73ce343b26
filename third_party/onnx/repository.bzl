"""@onnx117: ONNX 1.17's sources, from the tarball scripts/fetch_onnx.sh keeps in the cache.

Offline: the tarball is read from the dependency cache ($SLUICE_DEPS_CACHE, else
~/.cache/sluice-deps), never downloaded here, and must have the pinned sha256.
"""

def _onnx_source_impl(ctx):
    env = ctx.os.environ
    cache = env.get("SLUICE_DEPS_CACHE") or (env.get("HOME", "") + "/.cache/sluice-deps")
    tarball = ctx.path(cache + "/" + ctx.attr.tarball)
    if not tarball.exists:
        fail("%s is missing: run scripts/setup.sh (or scripts/fetch_onnx.sh) first" % tarball)
    ctx.download_and_extract(
        url = "file://" + str(tarball),
        sha256 = ctx.attr.sha256,
        stripPrefix = ctx.attr.strip_prefix,
    )

    # The release ships protos that gen_proto.py made for its own build; the BUILD file makes
    # them again from the *.in.proto sources, so remove these to leave one of each.
    for stale in ctx.attr.generated_in_release:
        ctx.delete(stale)
    ctx.symlink(ctx.attr.build_file, "BUILD.bazel")
    ctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % ctx.name)

onnx_source = repository_rule(
    implementation = _onnx_source_impl,
    attrs = {
        "tarball": attr.string(mandatory = True),
        "sha256": attr.string(mandatory = True),
        "strip_prefix": attr.string(),
        "build_file": attr.label(mandatory = True, allow_single_file = True),
        "generated_in_release": attr.string_list(),
    },
    environ = ["SLUICE_DEPS_CACHE", "HOME"],
    local = False,
)
