"""The apiforge compiler: definitions/*.yaml in, generated/ out (load → check → plan → emit)."""
