"""The labs\x27 exercises (filled in below)."""
