"""What a lesson adds to an edit: its challenge checked against the new state."""

from __future__ import annotations

from . import Row, summarize, timeit


def lesson_check(quick: bool = False) -> list[Row]:
    """``lesson_check``: one challenge's status after an edit, for every challenge of the
    shipped lessons, each at the start of its step (the trace is the one the workbench computes
    for the panels anyway; a new trace is made per run so that nothing the check resolves is
    cached between edits of different shapes). A lab's quantities are measured once per change
    of the lab, as the panel keeps them, so a check reads them as a lookup. The row is the
    slowest challenge's median."""
    from attnsim.lessons import preset, shipped_lessons, step_states
    from attnsim.lessons.labs import lab_values
    from attnsim.lessons.progress import Progress
    from attnsim.lessons.session import LessonRun

    budget = {"min_runs": 20, "budget_s": 0.05} if quick else {"min_runs": 200, "budget_s": 0.2}
    worst: tuple[float, str] = (0.0, "")
    times_all: list[float] = []
    count = 0
    for lesson in shipped_lessons():
        states = step_states(lesson, preset)
        for i, step in enumerate(lesson.steps):
            if step.challenge is None:
                continue
            run = LessonRun(lesson, Progress(), i)
            sc = states[i].revealed
            result = sc.compute()
            labs = lab_values(states[i].revealed_labs) if run.reads_labs() else {}
            times = timeit(
                lambda r=run, s=sc, res=result, v=labs: r.status(s, res, lambda: v), **budget
            )
            count += 1
            times_all += times
            median = sorted(times)[len(times) // 2]
            if median > worst[0]:
                worst = (median, f"{lesson.id} step {i + 1}")
    row = summarize("lesson_check", times_all, challenges=count, slowest=worst[1])
    row["slowest_median_ms"] = worst[0]
    return [row]


BENCHMARKS = {"lesson_check": lesson_check}
