#!/usr/bin/env python3
"""`llmsim report` end to end (issue 15): bad input exits 2 naming the option; the page is self-contained (no script,
no network reference), escapes user strings, and, rendered in headless Chromium, shows every section, draws every
SVG with a real size and produces a screenshot that is not blank.

usage: test_report_page.py LLMSIM_CLI SOURCE_DIR WORK_DIR      (exit 77 = skipped: no chromium on this machine)
"""
import html
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77
SECTIONS = ["The question", "The options", "The winner and why", "Cost at your load and at capacity",
            "Latency as load grows", "Assumptions"]
# One cheap comparison: two cards, a pair, and an option that cannot run (8B fp16 on a 10 GB MIG slice).
GPUS = "rtx4090-24gb,2xrtx4090-24gb,a100-80gb-sxm,a100-80gb-sxm:mig-1g.10gb"
FAST = ["--replications", "1", "--requests", "300", "--rel-tol", "0.1", "--jobs", "2", "-q"]
PROBE = """<script>
/* added by the test, not part of the report: the size each figure was drawn at, and each image's pixels */
(function () {
  var out = {svg: [], img: [], injected: document.getElementById('injected') !== null};
  document.querySelectorAll('svg').forEach(function (s) {
    var r = s.getBoundingClientRect();
    out.svg.push({w: r.width, h: r.height, marks: s.querySelectorAll('path, circle, line').length});
  });
  document.querySelectorAll('img').forEach(function (i) { out.img.push({w: i.naturalWidth, h: i.naturalHeight}); });
  var pre = document.createElement('pre');
  pre.id = 'llmsim-probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def read_png(path):
    """(width, height, [(r, g, b), ...]) of an 8-bit RGB/RGBA, non-interlaced PNG (what Chromium writes)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path} is not a PNG")
    pos, idat, head = 8, [], None
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + n
    w, h, depth, colour, _, _, interlace = head
    if depth != 8 or colour not in (2, 6) or interlace:
        fail(f"unexpected PNG format {head}")
    bpp = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(b"".join(idat)), w * bpp
    pixels, prev = [], bytearray(stride)
    for y in range(h):  # undo the per-row filters (PNG spec section 9)
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride) if f else ():
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        pixels.extend(tuple(line[i:i + 3]) for i in range(0, stride, bpp))
        prev = line
    return w, h, pixels


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=240, **kw)


def bad_input(cli, scenario, work):
    cases = [(["--gpus", "rtx9090-99gb"], os.path.join(work, "x.html"), "--gpus"),
             (["--gpus", "rtx4090-24gb"], os.path.join(work, "no-such-dir", "x.html"), "--out"),
             (["--gpus", "rtx4090-24gb", "--prices", "rtx4090-24gb=cheap"], os.path.join(work, "x.html"), "--prices")]
    for extra, out, named in cases:
        p = run([cli, "report", scenario, *extra, "-o", out, *FAST])
        lines = p.stderr.strip().splitlines()
        if p.returncode != 2 or len(lines) != 1 or named not in lines[0]:
            fail(f"{extra} -o {out}: expected exit 2 and one stderr line naming {named}, got {p.returncode}: {p.stderr!r}")
    p = run([cli, "report", scenario, "--gpus", "rtx4090-24gb", *FAST])
    if p.returncode != 2 or "--out" not in p.stderr:
        fail(f"no -o: expected exit 2 naming --out, got {p.returncode}: {p.stderr!r}")
    if os.path.exists(os.path.join(work, "x.html")):
        fail("a failed report left an output file behind")


def chromium(exe, profile, *args):
    return run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--mute-audio",
                "--no-first-run", f"--user-data-dir={profile}", *args])


def main():
    cli, source, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    work = tempfile.mkdtemp(dir=work)
    # A folder name with markup in it: the page shows the scenario path, which must arrive as text.
    hostile = os.path.join(work, 'in <b id="injected">bold</b> & "quotes"')
    os.makedirs(hostile)
    scenario = os.path.join(hostile, "chat.json")
    with open(os.path.join(source, "examples", "scenarios", "chat-8b.json")) as f:
        s = json.load(f)
    s["workload"]["num_requests"] = 400
    s.setdefault("cost", {})["electricity_per_kwh"] = 0.15  # owned hardware priced beside rental
    with open(scenario, "w") as f:
        json.dump(s, f)
    bad_input(cli, scenario, work)

    page = os.path.join(work, "report.html")
    p = run([cli, "report", scenario, "--gpus", GPUS, "-o", page, *FAST])
    if p.returncode != 0:
        fail(f"llmsim report exited {p.returncode}: {p.stderr}")
    if "rent " not in p.stdout:
        fail(f"the command should print the headline, got {p.stdout!r}")
    text = open(page, encoding="utf-8").read()
    if re.search(r"<script|<link|<img[^>]+src=[\"']?https?:|url\(|@import|https?://", text, re.I):
        fail("the page must be self-contained: no script, stylesheet link, remote image, url() or web address")
    if 'id="injected"' in text or "&lt;b id=&quot;injected&quot;&gt;" not in text:
        fail("the scenario path was not escaped")

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        print("SKIP: chromium not installed (scripts/setup.sh installs it)")
        return SKIP
    probed = os.path.join(work, "probed.html")
    with open(probed, "w", encoding="utf-8") as f:
        f.write(text.replace("</body>", PROBE + "\n</body>"))
    profile = os.path.join(work, "profile")
    d = chromium(exe, profile, "--dump-dom", "file://" + probed)
    dom = d.stdout
    m = re.search(r'<pre id="llmsim-probe">(.*?)</pre>', dom, re.S)
    if d.returncode != 0 or not m:
        fail(f"chromium --dump-dom gave no probe (exit {d.returncode}): {d.stderr[-2000:]}")
    probe = json.loads(html.unescape(m.group(1)))
    if probe["injected"]:
        fail("markup from the scenario path became an element")
    visible = html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<(style|script)\b.*?</\1>", " ", dom, flags=re.S)))
    visible = re.sub(r"\s+", " ", visible)
    for section in SECTIONS:
        if section not in visible:
            fail(f"section '{section}' missing from the rendered page")
    for phrase in ["rent ", "per million output tokens", "PLACEHOLDER PRICES", "(placeholder)", "cannot run",
                   "Why not the others", "SLO: P95", "Owning the cards instead of renting", "buying pays back after", "saturated", 'in <b id="injected">bold</b> & "quotes"']:
        if phrase not in visible:
            fail(f"'{phrase}' missing from the rendered page text")
    if len(probe["svg"]) < 3:
        fail(f"expected the cost-vs-capacity and two latency-vs-load plots, got {len(probe['svg'])} SVGs")
    for i, svg in enumerate(probe["svg"]):
        if svg["w"] < 200 or svg["h"] < 150 or svg["marks"] < 10:
            fail(f"SVG {i} did not render with a real size and content: {svg}")
    for i, img in enumerate(probe["img"]):
        if img["w"] == 0 or img["h"] == 0:
            fail(f"image {i} did not load: {img}")

    # Rendered at a quarter scale (fewer pixels to decode: no image library needed, any python3 reads it).
    shot = os.path.join(work, "report.png")
    c = chromium(exe, profile, f"--screenshot={shot}", "--window-size=1200,2600", "--force-device-scale-factor=0.25",
                 "file://" + page)
    if c.returncode != 0 or not os.path.exists(shot):
        fail(f"chromium --screenshot failed (exit {c.returncode}): {c.stderr[-2000:]}")
    w, h, pixels = read_png(shot)
    groups, non_white = {}, 0
    for px in pixels:
        if sum(px) < 720:
            non_white += 1
        key = tuple(v // 32 for v in px)
        groups[key] = groups.get(key, 0) + 1
    distinct = sum(1 for n in groups.values() if n >= 3)
    if w < 200 or abs(h / w - 2600 / 1200) > 0.1 or distinct < 8 or non_white < 0.05 * w * h:
        fail(f"the screenshot looks blank: {w}x{h}, {distinct} colour groups, {non_white} non-white pixels")
    print(f"ok: {len(probe['svg'])} SVGs rendered, {distinct} colour groups, "
          f"{100 * non_white / (w * h):.0f}% of the {w}x{h} screenshot drawn")
    shutil.rmtree(work, ignore_errors=True)  # kept only when the test fails, to look at
    return 0


if __name__ == "__main__":
    sys.exit(main())
