#!/usr/bin/env python3
"""Writes a Kustomize monorepo: APPS overlays (apps/appI/overlays/prod: a kustomization and a
patch) over BASES bases (bases/baseJ: a kustomization and a Deployment), 2*(APPS+BASES) files.

    bench/gen_monorepo.py OUT [APPS=1000] [BASES=500]

Every overlay's patch sets a GPU request above its limit (an error at the patch), so each render
has findings. Deterministic.
"""
import os
import sys

DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  replicas: 1
  selector:
    matchLabels: {{app: base{j}}}
  template:
    metadata:
      labels: {{app: base{j}}}
    spec:
      containers:
      - name: main
        image: registry.example.com/base{j}:1.0
        resources:
          requests: {{cpu: "1", memory: 1Gi}}
          limits: {{memory: 1Gi}}
"""

PATCH = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  template:
    spec:
      containers:
      - name: main
        resources:
          requests:
            nvidia.com/gpu: 2
          limits:
            nvidia.com/gpu: 1
"""


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main():
    out = sys.argv[1]
    apps = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    bases = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    for j in range(bases):
        d = os.path.join(out, "bases", f"base{j}")
        write(os.path.join(d, "kustomization.yaml"), "resources:\n- deployment.yaml\n")
        write(os.path.join(d, "deployment.yaml"), DEPLOY.format(j=j))
    for i in range(apps):
        d = os.path.join(out, "apps", f"app{i}", "overlays", "prod")
        write(
            os.path.join(d, "kustomization.yaml"),
            f"namePrefix: app{i}-\nresources:\n- ../../../../bases/base{i % bases}\npatches:\n- path: patch.yaml\n",
        )
        write(os.path.join(d, "patch.yaml"), PATCH)


if __name__ == "__main__":
    main()
