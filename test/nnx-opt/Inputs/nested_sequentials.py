"""Prints an nnx.model of N nested nnx.sequentials around one ReLU, one
sequential per line (line k + 2 opens sequential k, at bracket depth k + 2)."""
import sys

depth = int(sys.argv[1])
print("nnx.model @m inputs(tensor<?x2xf32>) {")
for level in range(depth):
    print(f"nnx.sequential @s{level} keying = named {{")
print("nnx.relu @act")
for _ in range(depth):
    print("}")
print("}")
