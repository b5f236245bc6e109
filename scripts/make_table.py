#!/usr/bin/env python3
"""Writes a small CSV table to classify, for trying `cohort train --dataset csv:FILE`: three
interleaved spirals (classes "red", "green", "blue") in the columns x and y, plus two columns of
noise the model must learn to ignore. Deterministic for a given --seed; standard library only.

    python3 scripts/make_table.py data/spirals.csv
    build/cohort train --model mlp --dataset csv:data/spirals.csv --target colour --epochs 30
"""
import argparse
import math
import os
import random


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the CSV file to write")
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    classes = ["red", "green", "blue"]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        f.write("x,y,noise1,noise2,colour\n")
        for i in range(args.rows):
            k = i % len(classes)
            r = rng.random()
            angle = 3.5 * r * math.pi + 2 * math.pi * k / len(classes) + rng.gauss(0, 0.15)
            x, y = r * math.cos(angle), r * math.sin(angle)
            f.write(f"{x:.5f},{y:.5f},{rng.gauss(0, 1):.5f},{rng.uniform(-3, 3):.5f},{classes[k]}\n")
    os.replace(tmp, args.out)
    print(f"make_table: wrote {args.rows} rows to {args.out}")


if __name__ == "__main__":
    main()
