// The compute-node side of a Slurm sweep: `saturate sweep run-one JOB.json`, which each Slurm job runs. The attempt
// itself (job.json in; started.json, footprint.json and outcome.json out; the run measured as a local sweep
// measures it) is sweep's, shared by every backend (sweep/node_attempt.h). What is Slurm's is here: who runs it
// (the job id and node name from Slurm's environment), the job's request in job.json (SlurmRequest), and what a
// shape's sized requests are computed from in an outcome.
#pragma once

#include <string>

#include "slurm/right_size.h"
#include "sweep/node_attempt.h"
#include "util/result.h"

namespace sat::slurm {

// This process's Slurm job: "<array job>_<task>" for an array task, else $SLURM_JOB_ID ("" outside Slurm); and the
// node as Slurm names it ($SLURMD_NODENAME, which squeue's and scontrol's NodeList use and which may differ from
// the host's name), else the host's name.
sweep::NodeIdentity SlurmNodeIdentity();

// The usage a sized request is computed from (slurm/right_size.h), as the outcome (or footprint) measured it.
ShapeUsage UsageOf(const sweep::NodeOutcome& outcome);

// Runs the attempt of the job file at `job_path` as this Slurm job (sweep::RunNodeAttempt): the exit code the
// wrapper exits with (0 when the run finished, 1 when it did not), or an error when the job file cannot be read
// or the outcome cannot be written.
Result<int> RunNodeJob(const std::string& job_path, const sweep::NodeOptions& options);

}  // namespace sat::slurm
