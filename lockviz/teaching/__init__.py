"""What learners and teachers do with runs: the course of lessons, free play, comparisons."""
