"""Airflow DAG: a partitioned tdsextract export with dynamic task mapping.

`tdsextract plan --json` lists the job's units; one mapped task runs each
share (`run --unit i/N`), all sharing the DAG run's id as the tdsextract
run id, and a last task commits the manifest once every share is done.
Exit codes 3 and 5 (source unreachable, transient failure) are worth the
retries Airflow gives a task; a resumed share skips its finished units.
"""

import json
import subprocess

import pendulum
from airflow.decorators import dag, task
from airflow.operators.bash import BashOperator

JOB = "/opt/tdsextract/nightly.yaml"
SHARES = 4


@dag(schedule="0 2 * * *", start_date=pendulum.datetime(2026, 1, 1, tz="UTC"), catchup=False, max_active_runs=1)
def tdsextract_nightly():
    @task
    def shares():
        # The plan is printed for the logs; the shares split its units.
        units = json.loads(subprocess.run(["tdsextract", "plan", JOB, "--json"], check=True, capture_output=True, text=True).stdout)
        print(f"{len(units)} units")
        return [f"{i}/{SHARES}" for i in range(SHARES)]

    env = {"TDSEXTRACT_RUN_ID": "{{ run_id }}"}
    run = BashOperator.partial(
        task_id="run_share",
        env=env,
        append_env=True,
        retries=3,
    ).expand(bash_command=shares().map(lambda share: f"tdsextract run {JOB} --unit {share}"))

    commit = BashOperator(task_id="commit", bash_command=f"tdsextract commit {JOB}", env=env, append_env=True, retries=3)
    run >> commit


tdsextract_nightly()
