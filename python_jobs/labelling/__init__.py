"""Which answers people should label next (`finrag label-next`), and the design the calibrated mean needs when they
were chosen that way (python_jobs/labelling/design.py)."""
