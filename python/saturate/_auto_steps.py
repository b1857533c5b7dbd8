"""Training steps as the automatic instrumentation counts them: where a step ends (optimizer.step, backward), the
first step that names the training loader and the model, and the counters each step adds to."""

import time

from ._auto_loaders import LOADER_KNOBS, _knob_request

_perf = time.perf_counter


class Steps:
    """Step accounting; mixed into _auto.Auto."""

    __slots__ = ()  # the attributes are Auto's (_auto.py)

    def on_step_begin(self):
        self.step_depth += 1

    def guarded_step_end(self, at):
        try:
            self.on_step_end(at)
        except Exception as e:
            self.fail("the end of a training step (%s)" % at, e)

    def on_step_end(self, at):
        # The per-step path: locals over repeated attribute reads, no calls but the clock on the common path (the
        # overhead benchmark, bench/auto_overhead.py --loops, counts its instructions).
        if at == "optimizer":
            depth = self.step_depth - 1
            self.step_depth = depth if depth > 0 else 0
            if depth > 0:
                return
        state = self.state
        if not self.active or state.explicit:
            return
        now = _perf()
        if not self.identified:
            first_samples = self._first_step(at)
        else:
            first_samples = 0
            step_no = self.step_no
            # The loader that handed over this step's batches is the training loader (it may be a new one: a
            # loader rebuilt every epoch); its batches are the step's samples, and its time was not another's.
            train = self.train
            current = self.current
            if current is not None and current is not train and current.stamp == step_no:
                self.train = train = current
                self.excluded = 0.0
                self.excluding_since = None
            excluded = self.excluded
            if self.excluding_since is not None:
                excluded += now - self.excluding_since
                self.excluding_since = None
            t_end = self.t_end
            if train is not None and train.stamp == step_no:
                wait = train.pending_wait
                samples = train.pending_samples or self.model_samples or self.samples_flag or 1
            elif train is not None and self.step_ended:
                # No batch was asked for since the last step ended: another optimizer stepped on the same batch
                # (a GAN's generator after its discriminator). One training step per batch; this time is part of it.
                self.excluded = excluded
                self._continue_step(now)
                return
            else:
                wait = 0.0
                samples = self.model_samples or self.samples_flag or 1
            if state.extras.profiled:
                # The step ran under the profiler: slower than the others, so left out like a validation pass.
                state.excluded_s += now - t_end
            else:
                loop = now - t_end - excluded - wait
                state.steps += 1
                state.samples += samples
                state.wait_s += wait
                if loop > 0:
                    state.step_s += loop
                if excluded:
                    state.excluded_s += excluded
                backward_at = self.backward_at
                if backward_at is not None and backward_at > t_end:
                    before = backward_at - t_end - excluded
                    if before > 0:
                        state.before_backward_s += before if before < loop + wait else loop + wait
                state.after_step_s += self.after_step
        # The next step starts here; every loader's pending batches now belong to a past step.
        self.step_no += 1
        self.model_samples = 0
        self.after_step = 0.0
        self.excluded = 0.0
        self.backward_at = None
        self.t_end = now
        self.step_ended = True
        if first_samples or now >= state.next_report:
            state.progress(now)
        if state.extras.pending:
            self._extras_step_end(now, first_samples)
        if first_samples and self.mode in ("loader", "compute") and self.train is None:
            state.done("no-loader")
            raise SystemExit(0)

    def _continue_step(self, now):
        """The time since the previous step end joins that step (a second optimizer on the same batch)."""
        state = self.state
        if state.steps and not state.extras.profiled:
            state.step_s += now - self.t_end
        elif state.extras.profiled:
            state.excluded_s += now - self.t_end
        self.t_end = now

    def _step_samples(self):
        train = self.train
        if train is not None and train.stamp == self.step_no and train.pending_samples:
            return train.pending_samples
        return self.model_samples or self.samples_flag or 1

    def _extras_step_end(self, now, samples):
        """The FLOP count ends after the first step, the profiler advances after every step (_extras); their own
        time is left out of the measurement (excluded_s), and the next step is timed from when they are done."""
        extras = self.state.extras
        if not extras.pending:
            return
        extras.step_end(samples)
        after = _perf()
        self.state.excluded_s += after - now
        self.t_end = after

    def _first_step(self, at):
        """The first training step ended: name the training loader and the model and report what was found. The
        counters start from here (the first step is start-up); on_step_end then lets loader/compute modes take
        over. Returns the first step's samples (at least 1)."""
        self.identified = True
        self.step_at = at
        current = self.current
        self.train = current if current is not None and current.stamp == self.step_no else None
        self._find_model()
        if self.train is not None:
            self.samples_from = "loader"
        elif self.model_samples:
            self.samples_from = "model_input"
        elif self.samples_flag is not None:
            self.samples_from = "flag"
        else:
            self.samples_from = "steps"
        self.begin_reporting(self.train)
        if self.optimizers and self.state.rank is None:
            self.set_backward_patched(False)
        return self._step_samples()

    def begin_reporting(self, train):
        """hello, the loader message and the knob messages, once."""
        state = self.state
        if state.tracking:
            return
        state.auto = True
        state.begin_tracking()
        send = state.channel.send
        others = sum(self.site_counts.values()) - (1 if train is not None else 0)
        fields = {"key": None, "site": None, "others": max(0, others),
                  "samples_from": self.samples_from, "step_at": self.step_at}
        if train is not None:
            fields.update(train.settings)
            fields.update({"key": train.key, "site": train.site, "injected": dict(train.injected)})
        fields["batchnorm"] = self.model_batchnorm
        if state.rank is not None:
            fields.update(state.rank)
        send("loader", fields, patient=True)
        for name, fields in self._knob_messages(train):
            send("knob", fields, patient=True)

    def _knob_messages(self, train):
        knobs = self.state.knobs
        messages = []
        if train is not None:
            for name in LOADER_KNOBS:
                script = train.script.get(name)
                value = train.settings.get("num_workers" if name == "workers" else name)
                if value is None:  # prefetch_factor without workers: unused, the script's value stands
                    value = script
                fields = {"name": name, "value": value, "default": script, "auto": True,
                          "source": "saturate" if name in train.injected else "default"}
                if name in train.errors:
                    fields["error"] = train.errors[name]
                elif _knob_request(knobs, name) is not None and name not in train.injected:
                    fields["error"] = "the training loader (%s) was not the one built for the knobs%s" % (
                        train.key, " (target %s)" % self.target if self.target else "")
                messages.append((name, fields))
        amp = {"name": "amp", "value": self.amp_in_effect(), "default": self.script_amp or "off", "auto": True,
               "source": "saturate" if self.amp_applied else "default"}
        if self.amp_error:
            amp["error"] = self.amp_error
        messages.append(("amp", amp))
        return messages
