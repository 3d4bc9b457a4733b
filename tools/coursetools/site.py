"""Placeholder replaced below."""
def build(out):
    return 0
def browser_test(out, shots):
    return 0
