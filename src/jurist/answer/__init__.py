"""What a judge's answer looks like and what it means: fields, response formats (their grammar,
instructions, parsing and label prefixes), typed values, output specs, scores and label probabilities."""
