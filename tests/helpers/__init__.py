"""Code the tests share (cases, runs, fixtures builders); no tests here."""
