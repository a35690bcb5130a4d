"""``solve``: the shipped lessons all work; a challenge passed before the learner acts, a
solution that does not pass and a claim that does not hold are each reported; the command line
(``attnsim lessons``, ``attnsim lesson check|solve``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnsim import cli
from attnsim.lessons import (
    LessonError,
    check_file,
    parse_lesson,
    read_lesson,
    shipped_lessons,
    solve_lesson,
)
from attnsim.resources import resource_path

SHIPPED_DIR = resource_path("lessons")
SHIPPED_FILES = sorted(Path(SHIPPED_DIR).glob("*.toml"))
MALFORMED = Path(__file__).resolve().parent / "malformed"

HEAD = 'format = "attnsim-lesson"\nversion = 1\nid = "{id}"\ntitle = "A test lesson"\n'
FIRST = '\n[[steps]]\ntitle = "Look"\nscenario = "river-bank"\ntext = "Look at bank."\n'


def challenge(check: str, solution: str, title: str = "Act") -> str:
    return (
        f'\n[[steps]]\ntitle = "{title}"\ntext = "Do it."\n'
        '\n[steps.challenge]\ngoal = "A goal."\n'
        f"checks = [{{ {check} }}]\nsolution = [{{ {solution} }}]\n"
    )


TO_RIVER = 'quantity = "weight", of = "bank", on = "river", at_least = 0.7'
MOVE_QUERY = 'set = "query", token = "bank", value = [0, 5, 0, -1]'

GOOD = (
    HEAD.format(id="good")
    + FIRST
    + (
        '\n[steps.predict]\nquestion = "How much?"\n'
        'number = { quantity = "weight", of = "bank", on = "river" }\ntolerance = 0.02\n'
        'reveal = "0.31"\n'
        'claim = [{ quantity = "weight", of = "bank", on = "bank", at_least = 0.4, at_most = 0.45 }]\n'
    )
    + challenge(TO_RIVER, MOVE_QUERY)
)

ALREADY_PASSED = (
    HEAD.format(id="already-passed")
    + FIRST
    + challenge('quantity = "weight", of = "bank", on = "bank", at_least = 0.1', MOVE_QUERY)
)
SOLUTION_FAILS = (
    HEAD.format(id="solution-fails") + FIRST + challenge(TO_RIVER, 'set = "temperature", value = 2')
)
CLAIM_FAILS = (
    HEAD.format(id="claim-fails")
    + FIRST
    + (
        '\n[steps.predict]\nquestion = "Up or down?"\nchoices = ["up", "down"]\nanswer = 2\n'
        'show = [{ set = "temperature", value = 0.2 }]\nreveal = "Down."\n'
        'claim = [{ quantity = "weight", of = "bank", on = "bank", at_most = 0.5 }]\n'
    )
)
TWO_FAIL = (
    HEAD.format(id="two-fail")
    + FIRST
    + challenge(
        'quantity = "temperature", at_least = 0.5', 'set = "temperature", value = 1', "Already"
    )
    + challenge(TO_RIVER, 'set = "scale", value = true', "Never")
    + challenge(TO_RIVER, MOVE_QUERY, "Fine")
)


def write(tmp_path: Path, text: str, name: str = "lesson.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ---- the shipped lessons -----------------------------------------------------------------------
def test_there_are_shipped_lessons():
    lessons = shipped_lessons()
    assert len(lessons) == len(SHIPPED_FILES) >= 1
    assert "mixing" in {lesson.id for lesson in lessons}
    assert [lesson.order for lesson in lessons] == sorted(lesson.order for lesson in lessons)
    assert len({lesson.id for lesson in lessons}) == len(lessons), "ids are unique"


@pytest.mark.parametrize("lesson", shipped_lessons(), ids=lambda lesson: lesson.id)
def test_every_shipped_lesson_solves(lesson):
    checked = solve_lesson(lesson)
    assert [c.step for c in checked] == list(range(1, len(lesson.steps) + 1))
    bad = [(c.step, c.lines) for c in checked if not c.ok]
    assert not bad
    for step, c in zip(lesson.steps, checked, strict=True):
        if step.graded:
            assert c.lines, "a graded step says what it found"


@pytest.mark.parametrize("path", SHIPPED_FILES, ids=lambda p: p.name)
def test_every_shipped_file_checks(path):
    lesson, states = check_file(path)
    assert len(states) == len(lesson.steps)
    assert lesson.file == str(path)


def test_the_mixing_lesson_in_numbers():
    lesson = next(les for les in shipped_lessons() if les.id == "mixing")
    checked = solve_lesson(lesson)
    assert checked[0].lines[0] == "the answer is bank's weight on river = 0.31"
    assert checked[1].lines[0].startswith("the answer is bank's output on water = 0.524")
    assert checked[2].lines[0].startswith("not passed at the start (bank's weight on river 0.31")
    assert checked[2].lines[1].startswith("passed after Show me")
    assert checked[3].lines == ("the answer is 'finance'",)


# ---- hand-written lessons ----------------------------------------------------------------------
def solve_text(text: str):
    return solve_lesson(parse_lesson(text, "hand.toml"))


def test_a_good_lesson_solves():
    checked = solve_text(GOOD)
    assert [c.ok for c in checked] == [True, True]
    assert checked[0].lines[0] == "the answer is bank's weight on river = 0.31"
    assert checked[0].lines[1].startswith("claim holds: bank's weight on bank at least 0.4")
    assert "not passed at the start" in checked[1].lines[0]
    assert "passed after Show me" in checked[1].lines[1]


def test_a_challenge_passed_at_its_start_is_not_ok():
    checked = solve_text(ALREADY_PASSED)
    assert [c.ok for c in checked] == [True, False]
    assert checked[1].lines[0].startswith("the challenge is passed before the learner acts")
    assert "bank's weight on bank 0.428" in checked[1].lines[0]


def test_a_solution_that_does_not_pass_is_not_ok():
    checked = solve_text(SOLUTION_FAILS)
    assert [c.ok for c in checked] == [True, False]
    assert checked[1].lines[0].startswith("not passed at the start")
    assert checked[1].lines[1].startswith("the solution does NOT pass")


def test_a_claim_that_does_not_hold_is_not_ok():
    checked = solve_text(CLAIM_FAILS)
    assert [c.ok for c in checked] == [False]
    assert checked[0].lines[0] == "the answer is 'down'"
    assert checked[0].lines[1].startswith("claim does NOT hold: bank's weight on bank at most 0.5")


def test_a_claim_is_read_after_the_show_edits():
    """At T = 0.2 bank's weight on itself is above 0.5; at T = 1 (before the show) it is 0.43."""
    text = CLAIM_FAILS.replace("at_most = 0.5", "at_least = 0.5")
    assert [c.ok for c in solve_text(text)] == [True]


def test_a_step_without_a_preset_starts_where_the_last_one_ended():
    from attnsim.lessons import preset
    from attnsim.lessons.check import step_states

    lesson = parse_lesson(
        HEAD.format(id="chain")
        + FIRST
        + challenge(TO_RIVER, 'set = "temperature", value = 0.25')
        + '\n[[steps]]\ntitle = "After"\ntext = "x"\nsetup = [{ set = "scale", value = false }]\n'
    )
    states = step_states(lesson, preset)
    assert states[1].start.temperature == 1.0
    assert states[1].solved.temperature == 0.25
    assert states[2].start.temperature == 0.25
    assert states[2].start.scale is False
    assert states[1].solved.scale is True  # the earlier states are not changed


def test_a_lesson_that_reads_but_does_not_check():
    """read_lesson checks the file alone; the preset is only looked up by check_file."""
    lesson = parse_lesson(HEAD.format(id="x") + FIRST.replace("river-bank", "nowhere"), "x.toml")
    assert lesson.steps[0].scenario == "nowhere"
    with pytest.raises(LessonError, match="there is no preset 'nowhere'"):
        solve_lesson(lesson)


# ---- the command line --------------------------------------------------------------------------
def run(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("attnsim: error: ")
    assert "Traceback" not in err
    return lines[0]


def test_lessons_lists_the_shipped_lessons(capsys):
    code, out, err = run(["lessons"], capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    lessons = shipped_lessons()
    assert len(lines) == len(lessons)
    for line, lesson in zip(lines, lessons, strict=True):
        graded = sum(step.graded for step in lesson.steps)
        assert line.startswith(lesson.id + " ")
        assert line.endswith(f"{lesson.title} ({len(lesson.steps)} steps, {graded} graded)")
    mixing = next(line for line in lines if line.startswith("mixing "))
    assert mixing.endswith("(5 steps, 5 graded)")


def test_lesson_check_a_good_file(tmp_path, capsys):
    path = write(tmp_path, GOOD)
    code, out, err = run(["lesson", "check", str(path)], capsys)
    assert (code, err) == (0, "")
    assert out == f"{path}: lesson 'good' is valid: 2 steps, 2 graded\n"


def test_lesson_check_a_shipped_lesson_by_id(capsys):
    code, out, err = run(["lesson", "check", "mixing"], capsys)
    assert (code, err) == (0, "")
    assert out.endswith("01-mixing.toml: lesson 'mixing' is valid: 5 steps, 5 graded\n")


def test_lesson_check_does_not_solve(tmp_path, capsys):
    """A lesson whose challenge is already passed is valid: only solve runs the steps."""
    path = write(tmp_path, ALREADY_PASSED)
    code, out, err = run(["lesson", "check", str(path)], capsys)
    assert (code, err) == (0, "")
    assert "is valid" in out


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("unknown-preset.toml", "step 1.scenario: there is no preset 'river-bnak'"),
        ("not-toml.toml", "line 3"),
        ("quantity-code.toml", "there is no quantity"),
        ("image-parent-folder.toml", "image or link '../secret.png'"),
    ],
)
@pytest.mark.parametrize("command", ["check", "solve"])
def test_lesson_check_and_solve_refuse_a_malformed_file(command, name, fragment, capsys):
    path = MALFORMED / name
    code, out, err = run(["lesson", command, str(path)], capsys)
    assert (code, out) == (2, "")
    line = one_error_line(err)
    assert str(path) in line and fragment in line, line


def test_lesson_check_a_folder_and_a_missing_file(tmp_path, capsys):
    folder = tmp_path / "lessons.toml"
    folder.mkdir()
    code, out, err = run(["lesson", "check", str(folder)], capsys)
    assert (code, out) == (2, "")
    assert "folder" in one_error_line(err)
    missing = tmp_path / "missing.toml"
    code, out, err = run(["lesson", "check", str(missing)], capsys)
    assert (code, out) == (2, "")
    assert f"{missing}: " in one_error_line(err)


def test_lesson_check_an_unknown_id(capsys):
    code, out, err = run(["lesson", "check", "no-such-lesson"], capsys)
    assert (code, out) == (2, "")
    line = one_error_line(err)
    assert "no lesson 'no-such-lesson'" in line and "mixing" in line


def test_lesson_solve_a_good_file(tmp_path, capsys):
    path = write(tmp_path, GOOD)
    code, out, err = run(["lesson", "solve", str(path)], capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "step 1 (Look): ok"
    assert lines[1] == "    the answer is bank's weight on river = 0.31"
    assert "step 2 (Act): ok" in lines
    assert lines[-1] == "good: every step works"


def test_lesson_solve_mixing_by_id(capsys):
    code, out, err = run(["lesson", "solve", "mixing"], capsys)
    assert (code, err) == (0, "")
    assert out.count(": ok\n") == 5 and "FAILED" not in out
    assert out.endswith("mixing: every step works\n")


@pytest.mark.parametrize(
    ("text", "failing", "steps"),
    [(ALREADY_PASSED, 1, 2), (SOLUTION_FAILS, 1, 2), (CLAIM_FAILS, 1, 1), (TWO_FAIL, 2, 4)],
    ids=["already-passed", "solution-fails", "claim-fails", "two-fail"],
)
def test_lesson_solve_a_failing_lesson_exits_2(tmp_path, capsys, text, failing, steps):
    path = write(tmp_path, text)
    code, out, err = run(["lesson", "solve", str(path)], capsys)
    assert code == 2
    line = one_error_line(err)
    assert line == f"attnsim: error: {path}: {failing} of {steps} steps do not work"
    assert out.count(": FAILED\n") == failing
    assert "every step works" not in out


def test_lesson_solve_two_fail_names_them(tmp_path, capsys):
    path = write(tmp_path, TWO_FAIL)
    _, out, _ = run(["lesson", "solve", str(path)], capsys)
    assert "step 2 (Already): FAILED" in out
    assert "step 3 (Never): FAILED" in out
    assert "step 4 (Fine): ok" in out


def test_read_lesson_keeps_the_file_name(tmp_path):
    path = write(tmp_path, GOOD)
    assert read_lesson(path).file == str(path)
