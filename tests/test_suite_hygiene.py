"""Rules the test suite keeps so that it stays deterministic."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
SENDS = ("send_signal(", "os.kill(", "os.killpg(")
SLEEP = "time." + "sleep("


def test_no_fixed_sleep_in_a_test_that_sends_a_signal():
    """A signal is sent on an event (the scripted model's ``-M hold=``, see the
    ``signal_when_held`` fixture), never after a fixed sleep."""
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        if path == Path(__file__).resolve():
            continue
        text = path.read_text(encoding="utf-8")
        if any(send in text for send in SENDS) and SLEEP in text:
            offenders.append(str(path.relative_to(TESTS)))
    assert offenders == []
