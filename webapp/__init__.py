"""The Django project and its one app: the scheduling-lab dashboard (see docs/architecture.md)."""
