"""Entry point of ``python -m gating``."""

from gating.cli import main

raise SystemExit(main())
