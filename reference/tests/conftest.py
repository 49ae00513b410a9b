import os
import sys

REFERENCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REFERENCE not in sys.path:
    sys.path.insert(0, REFERENCE)
