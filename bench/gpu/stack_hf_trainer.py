#!/usr/bin/env python3
"""A Hugging Face Trainer fine-tuning a small BERT built from a config (random weights, nothing downloaded) on
synthetic tokens, knowing nothing of saturate: the GPU checks' stacks part (bench/gpu_checks.sh). Written against
transformers 5 (TrainingArguments: report_to, save_strategy, logging_strategy, dataloader_num_workers, bf16).

Its own count, from a TrainerCallback, every --print-every optimizer steps (after a device sync):
    step N t=<time.monotonic()> samples=S
S counts every sample the job trained on: steps x the per-device batch x processes x gradient accumulation.

    python3 bench/gpu/stack_hf_trainer.py --batch-size 32 --steps 400 [--bf16]
"""

import argparse
import tempfile
import time

import torch
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainerCallback, TrainingArguments


class Tokens(torch.utils.data.Dataset):
    """Random token ids and labels, the same for an index every time."""

    def __init__(self, n, seq_len, vocab):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab, (n, seq_len), generator=g)
        self.labels = torch.randint(0, 2, (n,), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": torch.ones_like(self.ids[i]), "labels": self.labels[i]}


class StepLines(TrainerCallback):
    def __init__(self, every):
        self.every = every

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step % self.every == 0:
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            samples = state.global_step * args.per_device_train_batch_size * args.world_size * \
                args.gradient_accumulation_steps
            print(f"step {state.global_step} t={time.monotonic():.4f} samples={samples}", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--bf16", action="store_true")
    p.add_argument("--print-every", type=int, default=10)
    args = p.parse_args()

    config = BertConfig(vocab_size=8192, hidden_size=256, num_hidden_layers=args.layers, num_attention_heads=4,
                        intermediate_size=1024, max_position_embeddings=max(512, args.seq_len), num_labels=2)
    model = BertForSequenceClassification(config)
    with tempfile.TemporaryDirectory() as out:
        training = TrainingArguments(output_dir=out, per_device_train_batch_size=args.batch_size, max_steps=args.steps,
                                     learning_rate=5e-5, logging_strategy="steps", logging_steps=50,
                                     save_strategy="no", report_to="none", dataloader_num_workers=args.workers,
                                     bf16=args.bf16, disable_tqdm=True)
        trainer = Trainer(model=model, args=training, train_dataset=Tokens(64 * args.batch_size, args.seq_len, 8192),
                          callbacks=[StepLines(args.print_every)])
        result = trainer.train()
    # The Trainer's own figure over the whole run, start-up and warm-up included.
    print(f"trainer: train_samples_per_second={result.metrics.get('train_samples_per_second')}", flush=True)


if __name__ == "__main__":
    main()
