"""The explorer page in a real browser: `momenta serve` on a generated array, Debian's chromium
driven headless through chromedriver and selenium. The page loads and lists the array, draws it
(the canvas is not blank; the drawn bins' extremes are the API's and NumPy's), pans and zooms
with the keyboard and the mouse (each view one overview request, of the expected range), goes
down to raw values, shows the readout and the progressive interval, and fits a phone's width.
A screenshot is kept under the build folder (its path printed). Skipped, with the reason, only
where chromium cannot start."""

import json
import math
import os
import pathlib
import shutil
import subprocess
import time
import urllib.parse
import urllib.request

import numpy as np
import pytest

N = 200_000


def find_browser():
    """(chromium, chromedriver) paths, or a reason they cannot be used."""
    try:
        import selenium  # noqa: F401
    except ImportError as e:
        return None, f"python3-selenium is not installed ({e}); tools/setup.sh installs it"
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        return None, "chromium or chromedriver is not installed; tools/setup.sh installs chromium chromium-driver"
    return (chromium, driver), None


START = "2026-01-02T03:04:05.5Z"  # the time axis case: element i at START + i / RATE
START_S = 1767323045.5
RATE = 1000.0


@pytest.fixture(params=[[]])
def served(cli, rng, request):
    """`momenta serve wave.npy` with the extra arguments of the test's parameter."""
    x = np.sin(np.arange(N) / 700.0) * 3 + rng.normal(0, 0.2, N)
    x[12_345] = 9.5  # a spike the envelope must show
    np.save("wave.npy", x)
    server = subprocess.Popen([cli.path, "serve", "wave.npy", "--listen", "127.0.0.1:0", "--port-file", "port"] +
                              request.param, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        for _ in range(300):
            if os.path.exists("port") and open("port").read().strip():
                break
            if server.poll() is not None:
                pytest.fail(f"momenta serve exited {server.returncode}: {server.stdout.read()}")
            time.sleep(0.05)
        base = f"http://127.0.0.1:{open('port').read().strip()}"
        yield base, x
    finally:
        server.terminate()
        server.wait(timeout=10)


def say(capsys, text):
    """A line on the terminal even under pytest -q (ctest's log keeps it)."""
    with capsys.disabled():
        print(f"\ntest_explorer: {text}", flush=True)


@pytest.fixture
def browser(capsys):
    found, why = find_browser()
    if not found:
        say(capsys, "skipped: " + why)
        pytest.skip(why)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1000,760",
                "--force-device-scale-factor=1"):
        options.add_argument(arg)
    options.binary_location = found[0]
    try:
        driver = webdriver.Chrome(service=Service(found[1]), options=options)
    except Exception as e:  # chromium cannot start here (no kernel namespaces, no shared memory, ...)
        why = f"chromium cannot start: {str(e).splitlines()[0]}"
        say(capsys, "skipped: " + why)
        pytest.skip(why)
    driver.set_script_timeout(30)
    yield driver
    driver.quit()


def get_json(base, path):
    with urllib.request.urlopen(base + path, timeout=30) as r:
        return json.loads(r.read())


def state(driver, expr):
    return driver.execute_script("return " + expr)


def settle(driver, timeout=20):
    """Waits until the page has nothing in flight and what it shows answers its view."""
    end = time.time() + timeout
    while time.time() < end:
        if state(driver, "window.explorerState && window.explorerState.drawn !== null && window.explorerState.idle()"):
            time.sleep(0.05)
            if state(driver, "window.explorerState.idle()"):
                return
        time.sleep(0.05)
    raise AssertionError(f"the page did not settle: {state(driver, 'JSON.stringify(window.explorerState.requests)')}")


def overview_requests(driver):
    return [r for r in state(driver, "window.explorerState.requests") if r["kind"] == "view"]


def last_view(driver):
    r = overview_requests(driver)[-1]
    assert not r["aborted"] and r["status"] == 200, r
    return r


def plot_columns(driver):
    return state(driver, "(() => { const d = window.explorerState.drawn; return d.plot.w; })()")


def check_drawn_bins(driver, base, x):
    """The drawn bins are the API's answer to the page's own request, bin by bin, and NumPy's."""
    request = last_view(driver)
    api = get_json(base, request["url"])["bins"]
    drawn = state(driver, "window.explorerState.drawn.bins")
    assert len(drawn) == len(api) == request["bins"]
    for k in (0, len(api) // 3, len(api) - 1):  # known bins: the first, one inside, the last
        lo, hi = api[k]["range"]
        assert drawn[k]["range"] == [lo, hi]
        for name, f in (("min", np.min), ("max", np.max), ("first", lambda v: v[0]), ("last", lambda v: v[-1])):
            assert drawn[k][name] == api[k]["stats"][name] == f(x[lo:hi]), (k, name)
    assert [b["min"] for b in drawn] == [b["stats"]["min"] for b in api]
    assert [b["max"] for b in drawn] == [b["stats"]["max"] for b in api]
    # Each bin is one pixel column, its stroke from min to max on the value axis drawn.
    d = state(driver, "window.explorerState.drawn")
    (ymin, ymax), plot = d["yRange"], d["plot"]
    for k in (0, len(api) // 2):
        b = d["bins"][k]
        assert b["x"] == plot["x0"] + k + 0.5
        assert b["yMax"] == pytest.approx(plot["y0"] + plot["h"] - (b["max"] - ymin) / (ymax - ymin) * plot["h"])


def inked_pixels(driver):
    return state(driver, """(() => {
        const c = document.getElementById('plot');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && d[i + 2] > d[i] + 40) n++;  // blue ink
        return n; })()""")


def expect_view(driver, lo, hi):
    settle(driver)
    r = last_view(driver)
    assert r["range"] == [lo, hi], r
    assert state(driver, "window.explorerState.view") == {"lo": lo, "hi": hi}


def axis_ticks(driver):
    """The x ticks drawn, each with the (fractional) element under its pixel position."""
    d = state(driver, "window.explorerState.drawn")
    axis = state(driver, "window.explorerState.axis")
    (lo, hi), plot = d["range"], d["plot"]
    for t in axis["ticks"]:
        t["element"] = lo + (t["x"] - plot["x0"]) / plot["w"] * (hi - lo)
        assert plot["x0"] <= t["x"] <= plot["x0"] + plot["w"], t
    return axis["kind"], axis["ticks"]


def check_index_ticks(driver):
    kind, ticks = axis_ticks(driver)
    assert kind == "index" and len(ticks) >= 2
    for t in ticks:
        assert abs(int(t["label"].replace(",", "")) - t["element"]) <= 1, t


def label_seconds(label):
    """Seconds since the epoch of a tick label "hh:mm:ss[.fff[fff]]" on START's day."""
    clock, _, frac = label.partition(".")
    h, m, sec = (int(v) for v in clock.split(":"))
    day = START_S - START_S % 86400
    return day + h * 3600 + m * 60 + sec + (int(frac) / 10 ** len(frac) if frac else 0)


def check_time_ticks(driver):
    """Every time label drawn is START + i / RATE for the element i under it, within one element."""
    kind, ticks = axis_ticks(driver)
    assert kind == "time" and len(ticks) >= 2, ticks
    for t in ticks:
        want = START_S + t["element"] / RATE
        assert abs(label_seconds(t["label"]) - want) <= 1 / RATE, (t, want)
    return [t["label"] for t in ticks]


@pytest.mark.parametrize("served", [["--rate", str(RATE), "--start", START]], indirect=True)
def test_explorer_time_axis(cli, served, browser, capsys):
    base, x = served
    listed = get_json(base, "/api/arrays")["arrays"][0]
    assert listed["rate"] == RATE and listed["start"] == START_S
    browser.get(base + "/")
    settle(browser)
    from selenium.webdriver.common.by import By
    labels = check_time_ticks(browser)
    assert all(len(v) == 8 for v in labels), labels  # hh:mm:ss over the whole 200 s
    span = browser.find_element(By.ID, "span").text
    assert span.endswith("2026-01-02T03:04:05.5Z \u2013 2026-01-02T03:07:25.5Z"), span
    canvas = browser.find_element(By.ID, "plot")
    finer = set()
    for _ in range(14):  # down to single elements: 1 ms each, so millisecond labels
        canvas.send_keys("+")
        settle(browser)
        labels = check_time_ticks(browser)
        finer.add(len(labels[0]))
        if state(browser, "window.explorerState.drawn.kind") == "values":
            break
    assert state(browser, "window.explorerState.drawn.kind") == "values"
    assert 12 in finer, (finer, labels)  # hh:mm:ss.mmm once a tick step is under a second
    # Microseconds and dates as the step needs them (the same functions the axis uses).
    assert state(browser, "window.momentaTime.format(%r, 5e-6)" % (START_S + 1e-5)) == "03:04:05.500010"
    assert state(browser, "window.momentaTime.ticks(%r, %r, 5).step" % (START_S, START_S + 2e-5)) == 5e-6
    assert state(browser, "window.momentaTime.format(%r, 86400)" % START_S) == "2026-01-02"
    assert state(browser, "window.explorerState.errors") == []
    say(capsys, f"time labels at the deepest zoom: {labels}")
    build = pathlib.Path(os.environ.get("MOMENTA_BUILD_DIR") or ".")
    shot = (build / "tests" / "browser" / "explorer-time.png").resolve()
    shot.parent.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(shot))
    say(capsys, f"screenshot with a time axis: {shot}")


def test_explorer_in_chromium(cli, served, browser, capsys):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    base, x = served
    browser.get(base + "/")
    settle(browser)

    # Lists the array, draws all of it: one overview of one bin per pixel column.
    options = [o.text for o in browser.find_elements(By.CSS_SELECTOR, "#array option")]
    assert options == ["wave (f8, 200,000)"]
    cols = plot_columns(browser)
    assert overview_requests(browser)[0]["range"] == [0, N] and overview_requests(browser)[0]["bins"] == cols
    assert len(overview_requests(browser)) == 1
    assert state(browser, "window.explorerState.drawn.kind") == "envelope"
    assert inked_pixels(browser) > 5000
    check_drawn_bins(browser, base, x)
    check_index_ticks(browser)  # no --rate/--start: the x axis is the index
    assert "rate" not in get_json(base, "/api/arrays")["arrays"][0]
    assert state(browser, "window.explorerState.errors") == []

    # The readout is the API's /stats of the view; the progressive sum ends exact.
    readout = state(browser, "window.explorerState.readout")
    want = get_json(base, "/api/arrays/wave/stats?range=0:200000&stat=count&stat=mean&stat=std&stat=min&stat=max")
    assert readout == {"range": [0, N], "stats": want["stats"]}
    assert browser.find_element(By.ID, "r-count").text == "200,000"
    assert browser.find_element(By.ID, "r-max").text == "9.5"
    lines = state(browser, "window.explorerState.progressive")
    assert lines[-1]["exact"] and lines[-1]["estimate"] == pytest.approx(x.sum(), rel=1e-9)
    assert lines[-1]["upper"] - lines[-1]["lower"] <= lines[0]["upper"] - lines[0]["lower"]  # it shrank

    # Keyboard: + zooms in about the centre, arrows pan a tenth; each view one overview request.
    canvas = browser.find_element(By.ID, "plot")
    canvas.send_keys("+")
    expect_view(browser, 50_000, 150_000)
    before = len(overview_requests(browser))
    canvas.send_keys(Keys.ARROW_RIGHT)
    expect_view(browser, 60_000, 160_000)
    assert len(overview_requests(browser)) == before + 1
    canvas.send_keys(Keys.ARROW_LEFT, Keys.ARROW_LEFT)
    expect_view(browser, 40_000, 140_000)
    canvas.send_keys("-")
    expect_view(browser, 0, 200_000)
    check_drawn_bins(browser, base, x)

    # The mouse: a drag pans by the pixels moved; the wheel zooms about the pointer.
    canvas.send_keys("+")
    expect_view(browser, 50_000, 150_000)
    ActionChains(browser).move_to_element(canvas).click_and_hold().move_by_offset(-cols // 4, 0).release().perform()
    settle(browser)
    lo, hi = state(browser, "[window.explorerState.view.lo, window.explorerState.view.hi]")
    assert hi - lo == 100_000 and abs(lo - 75_000) <= 100_000 / cols * 2, (lo, hi)
    assert last_view(browser)["range"] == [lo, hi]
    ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(canvas), 0, -200).perform()
    settle(browser)
    lo2, hi2 = state(browser, "[window.explorerState.view.lo, window.explorerState.view.hi]")
    assert hi2 - lo2 == int(100_000 * math.exp(-200 * 0.0015) + 0.5) and lo <= lo2 and hi2 <= hi, (lo2, hi2)
    assert last_view(browser)["range"] == [lo2, hi2]

    # A box dragged (box mode, or Shift) zooms to the indices under it.
    browser.find_element(By.ID, "box").click()
    lo, hi = state(browser, "[window.explorerState.view.lo, window.explorerState.view.hi]")
    g = state(browser, "window.explorerState.drawn.plot")
    ActionChains(browser).move_to_element_with_offset(canvas, 0, 0).click_and_hold().move_by_offset(
        cols // 2, 0).release().perform()
    settle(browser)
    browser.find_element(By.ID, "box").click()
    blo, bhi = state(browser, "[window.explorerState.view.lo, window.explorerState.view.hi]")
    assert lo < blo < bhi < hi and abs((bhi - blo) - (hi - lo) / 2) <= (hi - lo) / g["w"] * 3, (lo, hi, blo, bhi)
    assert last_view(browser)["range"] == [blo, bhi]

    # Zoomed in to a few elements per bin: M4 lines (first, last, min, max), still the API's.
    kinds = set()
    for _ in range(14):
        canvas.send_keys("+")
        settle(browser)
        kind = state(browser, "window.explorerState.drawn.kind")
        if kind == "m4" and "m4" not in kinds:
            check_drawn_bins(browser, base, x)
        kinds.add(kind)
        if kind == "values":
            break
    assert kinds >= {"m4", "values"}, kinds

    # Down to single elements: the view holds fewer elements than columns, its values are drawn.
    assert state(browser, "window.explorerState.drawn.kind") == "values"
    lo, hi = state(browser, "[window.explorerState.view.lo, window.explorerState.view.hi]")
    assert hi - lo <= cols and last_view(browser)["url"].startswith("/api/arrays/wave/values")
    assert state(browser, "window.explorerState.drawn.values") == x[lo:hi].tolist()
    assert inked_pixels(browser) > 100
    browser.find_element(By.ID, "reset").click()
    expect_view(browser, 0, N)

    # Live mode follows a writer's updates: the log is polled and the view asked again.
    browser.find_element(By.ID, "live").click()
    seen = len(overview_requests(browser))
    time.sleep(0.2)
    cli("update", "wave.npy", input="150000 -20\n")
    end = time.time() + 15
    while time.time() < end and state(browser, "window.explorerState.updatesSeen") == 0:
        time.sleep(0.1)
    assert state(browser, "window.explorerState.updatesSeen") == 1
    settle(browser)
    assert len(overview_requests(browser)) > seen
    assert min(b["min"] for b in state(browser, "window.explorerState.drawn.bins")) == -20
    browser.find_element(By.ID, "live").click()
    assert state(browser, "window.explorerState.errors") == []

    build = pathlib.Path(os.environ.get("MOMENTA_BUILD_DIR") or ".")
    shot = (build / "tests" / "browser" / "explorer.png").resolve()
    shot.parent.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(shot))
    say(capsys, f"screenshot: {shot}")

    # A phone's width: the plot fits, its bins follow its columns, the controls stay reachable.
    browser.set_window_size(390, 800)
    time.sleep(0.3)
    settle(browser)
    narrow = plot_columns(browser)
    assert narrow < 390 and last_view(browser)["bins"] == narrow and last_view(browser)["range"] == [0, N]
    assert browser.execute_script("return document.documentElement.scrollWidth") <= 390
    assert browser.find_element(By.ID, "live").is_displayed() and browser.find_element(By.ID, "r-count").is_displayed()
    check_drawn_bins(browser, base, x)
    browser.save_screenshot(str(shot.with_name("explorer-phone.png")))
    say(capsys, f"screenshot at a phone's width: {shot.with_name('explorer-phone.png')}")
