"""Training steps as the automatic instrumentation counts them: where a step ends (optimizer.step, backward), the
first step that names the training loader and the model, and the counters each step adds to."""

import time

from ._auto_loaders import LOADER_KNOBS, _knob_request

_perf = time.perf_counter


class Steps:
    """Step accounting; mixed into _auto.Auto."""

    def on_step_begin(self):
        self.step_depth += 1

    def guarded_step_end(self, at):
        try:
            self.on_step_end(at)
        except Exception as e:
            self.fail("the end of a training step (%s)" % at, e)

    def on_step_end(self, at):
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
            self._first_step(now, at)
            return
        # The loader that handed over this step's batches is the training loader (it may be a new one: a loader
        # rebuilt every epoch); its batches are the step's samples, and its time was not another loader's.
        current = self.current
        if current is not None and current is not self.train and current.stamp == self.step_no:
            self.train = current
            self.excluded = 0.0
            self.excluding_since = None
        if self.excluding_since is not None:
            self.excluded += now - self.excluding_since
            self.excluding_since = None
        train = self.train
        fresh = train is not None and train.stamp == self.step_no
        if train is not None and not fresh and self.step_ended:
            # No batch was asked for since the last step ended: another optimizer stepped on the same batch (a
            # GAN's generator after its discriminator). One training step per batch; this time is part of it.
            self._continue_step(now)
            return
        wait = train.pending_wait if fresh else 0.0
        excluded = self.excluded
        loop = now - self.t_end - excluded - wait
        if state.extras.profiled:
            # The step ran under the profiler: slower than the others, so left out like a validation pass.
            state.excluded_s += now - self.t_end
        else:
            state.steps += 1
            state.samples += self._step_samples()
            state.wait_s += wait
            if loop > 0:
                state.step_s += loop
            if excluded:
                state.excluded_s += excluded
            backward_at = self.backward_at
            if backward_at is not None and backward_at > self.t_end:
                state.before_backward_s += min(max(0.0, backward_at - self.t_end - excluded), loop + wait)
            if self.after_step:
                state.phases["after_step"] = state.phases.get("after_step", 0.0) + self.after_step
        self._reset_step(now)
        if now >= state.next_report:
            state.progress(now)
        self._extras_step_end(now, 0)

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
        if self.model_samples:
            return self.model_samples
        if self.samples_flag is not None:
            return self.samples_flag
        return 1

    def _reset_step(self, now):
        self.step_no += 1  # every loader's pending batches now belong to a past step
        self.model_samples = 0
        self.after_step = 0.0
        self.excluded = 0.0
        self.backward_at = None
        self.t_end = now
        self.step_ended = True

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

    def _first_step(self, now, at):
        """The first training step ended: name the training loader and the model, report what was found, start
        the counters from here (the first step is start-up), and let loader/compute modes take over."""
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
        samples = self._step_samples()
        self._reset_step(now)
        self.state.progress(now)
        self._extras_step_end(now, samples)
        if self.mode in ("loader", "compute") and self.train is None:
            self.state.done("no-loader")
            raise SystemExit(0)

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
                  "samples_from": getattr(self, "samples_from", "loader"), "step_at": getattr(self, "step_at", None)}
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
