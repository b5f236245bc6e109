#!/usr/bin/python3
"""Renders a small image-classification data set in torchvision's ImageFolder layout:

    OUT/train/<class>/<n>.jpg|png    OUT/val/<class>/<n>.jpg|png

Classes: circle, square, triangle, star, cross. Each image has a random size (by default 48..96 pixels a
side, aspect ratio 0.8..1.25), background and shape colours, shape size, position and rotation, and Gaussian pixel
noise; every other image is saved as JPEG (random quality 70..95), the rest as PNG (some grey, some
RGBA), so a reader must handle both formats, several channel layouts and any image size. The same
--seed gives the same files (with the same Pillow).

usage: /usr/bin/python3 scripts/make_shapes_dataset.py OUT [--train N] [--val N] [--min-size S] [--max-size S] [--seed K]
       N images per class (default 200 train, 50 val). Needs Debian's python3-pil and python3-numpy.

Then, e.g.:  build/cohort train --dataset folder:OUT/train --val-dir OUT/val --image-size 32 --model blitz-cnn
"""
import argparse
import math
import os
import sys

import numpy as np
from PIL import Image, ImageDraw

CLASSES = ["circle", "cross", "square", "star", "triangle"]


def polygon(kind, cx, cy, r, angle):
    """The shape's outline as points (the circle is drawn as an ellipse instead)."""
    if kind == "square":
        pts = [(math.cos(angle + math.pi / 4 + k * math.pi / 2), math.sin(angle + math.pi / 4 + k * math.pi / 2))
               for k in range(4)]
    elif kind == "triangle":
        pts = [(math.cos(angle + k * 2 * math.pi / 3), math.sin(angle + k * 2 * math.pi / 3)) for k in range(3)]
    elif kind == "star":
        pts = []
        for k in range(10):
            rad = 1.0 if k % 2 == 0 else 0.42
            a = angle + k * math.pi / 5
            pts.append((rad * math.cos(a), rad * math.sin(a)))
    elif kind == "cross":
        w = 0.33
        base = [(w, 1), (w, w), (1, w), (1, -w), (w, -w), (w, -1), (-w, -1), (-w, -w), (-1, -w), (-1, w), (-w, w), (-w, 1)]
        ca, sa = math.cos(angle), math.sin(angle)
        pts = [(x * ca - y * sa, x * sa + y * ca) for x, y in base]
    else:
        raise ValueError(kind)
    return [(cx + r * x, cy + r * y) for x, y in pts]


def render(kind, rng, min_size, max_size):
    side = rng.uniform(min_size, max_size)
    aspect = rng.uniform(0.8, 1.25)  # w / h
    w = int(np.clip(round(side * math.sqrt(aspect)), min_size, max_size))
    h = int(np.clip(round(side / math.sqrt(aspect)), min_size, max_size))
    scale = 3  # drawn 3x larger, then reduced: smooth edges
    bg = tuple(int(v) for v in rng.integers(0, 256, 3))
    while True:  # a shape colour that stands out from the background
        fg = tuple(int(v) for v in rng.integers(0, 256, 3))
        if sum(abs(a - b) for a, b in zip(fg, bg)) > 150:
            break
    img = Image.new("RGB", (w * scale, h * scale), bg)
    draw = ImageDraw.Draw(img)
    r = rng.uniform(0.28, 0.45) * min(w, h) * scale
    cx = rng.uniform(r, w * scale - r)
    cy = rng.uniform(r, h * scale - r)
    angle = rng.uniform(0, 2 * math.pi)
    if kind == "circle":
        draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=fg)
    else:
        draw.polygon(polygon(kind, cx, cy, r, angle), fill=fg)
    img = img.resize((w, h), Image.LANCZOS)
    pixels = np.asarray(img).astype(np.float64) + rng.normal(0, rng.uniform(2, 12), (h, w, 3))
    return Image.fromarray(np.clip(pixels, 0, 255).round().astype(np.uint8), "RGB")


def save(img, path_base, index, rng):
    if index % 2 == 0:
        img.save(path_base + ".jpg", quality=int(rng.integers(70, 96)))
        return
    kind = index % 6
    if kind == 1:
        img = img.convert("L")  # grey PNG
    elif kind == 3:
        img = img.convert("RGBA")  # RGBA PNG, opaque
    img.save(path_base + ".png")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--train", type=int, default=200)
    p.add_argument("--val", type=int, default=50)
    p.add_argument("--min-size", type=int, default=48)
    p.add_argument("--max-size", type=int, default=96)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    if not (8 <= a.min_size <= a.max_size):
        p.error("need 8 <= --min-size <= --max-size")
    for split, count, offset in [("train", a.train, 0), ("val", a.val, 1)]:
        for c, kind in enumerate(CLASSES):
            d = os.path.join(a.out, split, kind)
            os.makedirs(d, exist_ok=True)
            rng = np.random.default_rng([a.seed, offset, c])
            for i in range(count):
                save(render(kind, rng, a.min_size, a.max_size), os.path.join(d, f"{i:05d}"), i, rng)
    print(f"make_shapes_dataset: {len(CLASSES)} classes, {a.train} train + {a.val} val images each, in {a.out}")


if __name__ == "__main__":
    main(sys.argv[1:])
