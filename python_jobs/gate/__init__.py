"""`finrag gate GATE_FILE --candidate RUN [--baseline RUN]`: a regression gate for CI (SPEC §10).

For every metric x slice the gate file declares, the candidate run is compared with the baseline on the questions
both were scored on (fct_question_metric_scores, the published per-question scores `finrag compare` reads; judged
metrics are per-answer means over repeats there). Rules and decisions:

- The question asked is non-inferiority: is the candidate worse than the baseline by more than the metric's margin
  δ (the largest loss that does not matter)? With d_i the per-question difference candidate - baseline turned to
  the metric's direction (the registry's higher_is_better: a loss is negative), the per-question values
  d_i + δ go to `paired_tests` (python_jobs/stats/paired_tests.py, the build's one definition, with the
  settings of vars run_comparison_*): its bootstrap interval, moved back by δ, is the interval of the difference;
  its two-sided paired t-test p gives the one-sided p of "mean(d) < -δ" (half of it on the side the mean falls, one
  less half on the other; scipy's ttest_rel(alternative='less') of d + δ).
- Runs that share no or too few questions (two application versions' production traffic; the rule
  run_comparison_tests of python_jobs/core/rules.yml, applied per metric x slice by
  python_jobs/stats/unpaired_tests.py's comparison_test) are compared on each run's own questions instead: the
  baseline's values and the candidate's + δ, both in the metric's direction, go to `welch_tests` (the function the
  comparison marts call): its bootstrap interval of the difference of means, moved back by δ, and its Welch t-test p,
  made one-sided as above (scipy's ttest_ind(equal_var=False, alternative='less')). Every row names its test
  (`paired_t` / `welch_t`) and its questions on each side (n_baseline, n_candidate; both n_questions when paired).
- Holm's step-down over every tested metric x slice of the gate (one family), at the gate's alpha (default var
  run_comparison_alpha). Verdicts: fail when the Holm-adjusted p is below alpha (a loss beyond δ is significant);
  pass when the interval's lower end (in the metric's direction) is at or above -δ; inconclusive otherwise (the
  interval still reaches below -δ: the row says how many questions it has and about how many would settle it). A
  slice with fewer than `min_questions` shared questions (unpaired: questions of either run) is reported "not
  tested" and kept out of Holm's family. The
  gate's verdict: fail if any row fails, else inconclusive if any row is, else pass.
- Margins are given on the metric's own scale (the registry's scale_min..scale_max; 0 <= δ <= its width) and divided
  by that width, since the per-question values compared are normalised to [0, 1]. The outputs speak the metric's
  own scale again: means, differences, intervals, margins and questions' scores go back to it in one function,
  python_jobs/gate/reports.py's on_metric_scale (p-values and verdicts are the same on either scale; it says why).
- Slices: the whole set, then every value of each slice dimension the file names (python_jobs/core/rules.yml, the
  columns of dim_questions); questions without a value in a dimension belong to none of its slices.
- The baseline: --baseline, else the file's `baseline`: a run id; `best`, each metric's best run of the candidate's
  dataset and kind (mart_run_families: never an oracle bound, a run that saw the gold evidence; where the candidate
  is that best run it is compared with nothing and passes); `sweep:<sweep id>`, that sweep's baseline run
  (mart_sweep_runs), or `sweep`, the baseline of the sweep the candidate belongs to.
- Judged metrics where a calibration is declared (fct_judge_calibration_pairs): a question whose answers both runs
  judged are labelled by the same label set and human metric is paired on the human labels (the calibrated value),
  any other on the judges' per-answer means - never one of each.
- Read-only: nothing is built or written but the files asked for (--junit, --markdown).
"""
