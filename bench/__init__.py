"""streamd benchmark suite: ``python -m bench [--quick|--smoke] [--rounds N] [--only W]
[--targets streamd,redis,fakeredis]``. See bench/README.md."""
