"""The RAG test set: 40 short facts, each in 5 situations, written to ``examples/rag_qa.jsonl`` (200 rows).

    python tests/rag/rag_rows.py      # rewrites examples/rag_qa.jsonl

Every fact has a question, a reference answer, a wrong answer, an extra claim, a passage that supports the
reference and an off-topic passage. Its five rows (``case`` column):

* ``faithful``: the reference as the answer; contexts [support, off-topic];
* ``hallucinated``: the wrong answer; contexts [off-topic, support];
* ``embellished``: the reference plus the extra claim, which no context supports; contexts [support];
* ``abstains``: "I don't know."; contexts [off-topic]; every fifth fact has no reference here (null), so
  the metrics that need one give ``missing_input``;
* ``unretrieved``: the reference as the answer, and no contexts (context metrics are undefined).

Each row also has ``criteria`` (one of four rubrics) and the fact's ``topic``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[2] / "examples" / "rag_qa.jsonl"

# (topic, question, reference, wrong answer, extra claim, supporting passage, off-topic passage)
FACTS: list[tuple[str, str, str, str, str, str, str]] = [
    (
        "water",
        "At what temperature does water boil at sea level?",
        "Water boils at 100 degrees Celsius at sea level.",
        "Water boils at 80 degrees Celsius at sea level.",
        "It boils faster in a copper pot.",
        "At standard atmospheric pressure, found at sea level, pure water boils at 100 degrees Celsius "
        "(212 degrees Fahrenheit). At higher altitudes the boiling point is lower.",
        "Ice is less dense than liquid water, which is why ice cubes float in a glass.",
    ),
    (
        "everest",
        "Which country borders Mount Everest to the north?",
        "China (Tibet) lies to the north of Mount Everest.",
        "India lies to the north of Mount Everest.",
        "The first ascent was made in 1921.",
        "Mount Everest sits on the border between Nepal and China: its southern side is in Nepal and its "
        "northern side in the Tibet Autonomous Region of China.",
        "K2, the second highest mountain, lies in the Karakoram range on the Pakistan-China border.",
    ),
    (
        "photosynthesis",
        "Which gas do plants take in for photosynthesis?",
        "Plants take in carbon dioxide for photosynthesis.",
        "Plants take in nitrogen for photosynthesis.",
        "Photosynthesis stops completely at night in all plants within a minute.",
        "In photosynthesis, plants use light energy to turn carbon dioxide from the air and water into "
        "glucose, releasing oxygen as a by-product.",
        "Many plants store starch in roots and tubers, such as potatoes and cassava.",
    ),
    (
        "moon",
        "How long does the Moon take to orbit the Earth?",
        "The Moon takes about 27.3 days to orbit the Earth.",
        "The Moon takes about 365 days to orbit the Earth.",
        "Its orbit is a perfect circle.",
        "The Moon completes one orbit around the Earth relative to the stars in about 27.3 days, the "
        "sidereal month.",
        "The Moon's surface is covered with craters formed by impacts of asteroids and comets.",
    ),
    (
        "python",
        "Who created the Python programming language?",
        "Guido van Rossum created Python.",
        "Dennis Ritchie created Python.",
        "He wrote the first version in Java.",
        "Python was created by Guido van Rossum, who began working on it in the late 1980s and released the "
        "first version in 1991.",
        "The C programming language was developed at Bell Labs in the early 1970s.",
    ),
    (
        "heart",
        "How many chambers does the human heart have?",
        "The human heart has four chambers.",
        "The human heart has three chambers.",
        "The left atrium is the largest chamber.",
        "The human heart has four chambers: two upper atria that receive blood and two lower ventricles "
        "that pump it out.",
        "Red blood cells carry oxygen using a protein called haemoglobin.",
    ),
    (
        "amazon",
        "Into which ocean does the Amazon River flow?",
        "The Amazon River flows into the Atlantic Ocean.",
        "The Amazon River flows into the Pacific Ocean.",
        "It is frozen for two months each year.",
        "The Amazon River rises in the Andes and crosses Brazil before emptying into the Atlantic Ocean.",
        "The Nile flows north through northeastern Africa into the Mediterranean Sea.",
    ),
    (
        "speed_of_light",
        "How fast does light travel in a vacuum?",
        "Light travels at about 300,000 kilometres per second in a vacuum.",
        "Light travels at about 300 kilometres per second in a vacuum.",
        "It travels faster through glass than through a vacuum.",
        "The speed of light in a vacuum is 299,792 kilometres per second, roughly 300,000 km/s.",
        "Sound travels through air at about 343 metres per second at room temperature.",
    ),
    (
        "shakespeare",
        "Who wrote the play Hamlet?",
        "William Shakespeare wrote Hamlet.",
        "Christopher Marlowe wrote Hamlet.",
        "Hamlet was first performed in 1650.",
        "Hamlet is a tragedy written by William Shakespeare around 1600, set in Denmark.",
        "The Globe Theatre in London was rebuilt in the 1990s near its original site.",
    ),
    (
        "gold",
        "What is the chemical symbol for gold?",
        "The chemical symbol for gold is Au.",
        "The chemical symbol for gold is Ag.",
        "Gold is the most abundant metal in the Earth's crust.",
        "Gold is a chemical element with the symbol Au, from the Latin word aurum, and atomic number 79.",
        "Silver has the chemical symbol Ag and is the best electrical conductor among metals.",
    ),
    (
        "mars",
        "How many moons does Mars have?",
        "Mars has two moons, Phobos and Deimos.",
        "Mars has no moons.",
        "Both moons are larger than Earth's Moon.",
        "Mars has two small moons, Phobos and Deimos, discovered by Asaph Hall in 1877.",
        "Jupiter's moon Ganymede is the largest moon in the Solar System.",
    ),
    (
        "euro",
        "In which year were euro banknotes and coins introduced?",
        "Euro banknotes and coins were introduced in 2002.",
        "Euro banknotes and coins were introduced in 1992.",
        "The United Kingdom adopted them at the same time.",
        "The euro was introduced as an accounting currency in 1999, and euro banknotes and coins entered "
        "circulation on 1 January 2002.",
        "The European Central Bank is based in Frankfurt, Germany.",
    ),
    (
        "dna",
        "What shape is the DNA molecule?",
        "DNA is shaped like a double helix.",
        "DNA is shaped like a single straight chain.",
        "The shape was first seen with an ordinary light microscope.",
        "DNA consists of two strands that wind around each other to form a double helix, a structure "
        "described by Watson and Crick in 1953.",
        "Proteins are built from twenty standard amino acids.",
    ),
    (
        "sahara",
        "Which is the largest hot desert in the world?",
        "The Sahara is the largest hot desert in the world.",
        "The Gobi is the largest hot desert in the world.",
        "It receives more rain than the Amazon rainforest.",
        "The Sahara, in North Africa, is the largest hot desert in the world, covering about 9 million "
        "square kilometres.",
        "Antarctica is often called the largest desert overall because of its very low precipitation, "
        "though it is cold.",
    ),
    (
        "telephone",
        "Who is credited with patenting the telephone in 1876?",
        "Alexander Graham Bell is credited with patenting the telephone in 1876.",
        "Thomas Edison is credited with patenting the telephone in 1876.",
        "He made the first call to the President.",
        "In 1876 Alexander Graham Bell was granted a United States patent for the telephone.",
        "The phonograph, which recorded and played back sound, was invented by Thomas Edison in 1877.",
    ),
    (
        "octopus",
        "How many arms does an octopus have?",
        "An octopus has eight arms.",
        "An octopus has ten arms.",
        "Each arm has its own separate brain that can survive for years.",
        "An octopus has eight arms lined with suckers, and it belongs to the class of cephalopods.",
        "Squid have eight arms and two longer tentacles.",
    ),
    (
        "pacific",
        "Which is the largest ocean on Earth?",
        "The Pacific Ocean is the largest ocean on Earth.",
        "The Atlantic Ocean is the largest ocean on Earth.",
        "It is also the saltiest ocean.",
        "The Pacific is the largest and deepest of Earth's oceans, covering about a third of the planet's "
        "surface.",
        "The Arctic Ocean is the smallest and shallowest of the world's oceans.",
    ),
    (
        "penicillin",
        "Who discovered penicillin?",
        "Alexander Fleming discovered penicillin.",
        "Louis Pasteur discovered penicillin.",
        "He discovered it while studying volcanoes.",
        "Penicillin was discovered in 1928 by the Scottish scientist Alexander Fleming, who noticed that a "
        "mould killed bacteria in a culture dish.",
        "Louis Pasteur developed early vaccines for rabies and anthrax.",
    ),
    (
        "bones",
        "How many bones are in the adult human body?",
        "An adult human body has 206 bones.",
        "An adult human body has 350 bones.",
        "The smallest bone is in the big toe.",
        "The adult human skeleton usually has 206 bones; babies are born with more, some of which fuse.",
        "Muscles are attached to bones by tendons.",
    ),
    (
        "canberra",
        "What is the capital of Australia?",
        "Canberra is the capital of Australia.",
        "Sydney is the capital of Australia.",
        "Canberra is Australia's largest city.",
        "Canberra was chosen as Australia's capital as a compromise between Sydney and Melbourne and became "
        "the seat of government in 1927.",
        "Sydney is home to a famous opera house on its harbour.",
    ),
    (
        "mercury",
        "Which planet is closest to the Sun?",
        "Mercury is the planet closest to the Sun.",
        "Venus is the planet closest to the Sun.",
        "Mercury has a thick atmosphere of carbon dioxide.",
        "Mercury is the smallest planet and the closest to the Sun, orbiting it every 88 days.",
        "Venus is the hottest planet because its dense atmosphere traps heat.",
    ),
    (
        "honey",
        "Which insects make honey?",
        "Honey bees make honey.",
        "Wasps make honey.",
        "Honey spoils within a week.",
        "Honey bees make honey from flower nectar, which they store and dry in wax honeycomb cells.",
        "Ants live in colonies with a queen and workers.",
    ),
    (
        "great_wall",
        "In which country is the Great Wall?",
        "The Great Wall is in China.",
        "The Great Wall is in Japan.",
        "It was built in a single year.",
        "The Great Wall of China is a series of fortifications built across northern China over many "
        "centuries.",
        "The Forbidden City in Beijing was the palace of Chinese emperors.",
    ),
    (
        "oxygen",
        "What is the atomic number of oxygen?",
        "The atomic number of oxygen is 8.",
        "The atomic number of oxygen is 16.",
        "Oxygen is a noble gas.",
        "Oxygen is the chemical element with the symbol O and atomic number 8.",
        "Nitrogen makes up about 78 percent of the Earth's atmosphere.",
    ),
    (
        "piano",
        "How many keys does a standard piano have?",
        "A standard piano has 88 keys.",
        "A standard piano has 64 keys.",
        "All of its keys are white.",
        "A standard modern piano has 88 keys: 52 white keys and 36 black keys.",
        "The violin has four strings tuned in fifths.",
    ),
    (
        "nile_length",
        "Which river is traditionally considered the longest in the world?",
        "The Nile is traditionally considered the longest river in the world.",
        "The Thames is traditionally considered the longest river in the world.",
        "It flows through South America.",
        "The Nile, at about 6,650 kilometres, is traditionally regarded as the longest river in the world, "
        "though some measurements favour the Amazon.",
        "The Danube flows through ten countries in central and eastern Europe.",
    ),
    (
        "insulin",
        "Which organ produces insulin?",
        "The pancreas produces insulin.",
        "The liver produces insulin.",
        "Insulin raises the level of sugar in the blood.",
        "Insulin is a hormone produced by beta cells in the pancreas; it helps cells take up glucose.",
        "The liver stores glycogen and produces bile.",
    ),
    (
        "olympics",
        "Where were the first modern Olympic Games held?",
        "The first modern Olympic Games were held in Athens in 1896.",
        "The first modern Olympic Games were held in Paris in 1896.",
        "Women competed in every event.",
        "The first modern Olympic Games took place in Athens, Greece, in 1896.",
        "The Winter Olympics were first held in Chamonix, France, in 1924.",
    ),
    (
        "saturn",
        "Which planet is known for its prominent ring system?",
        "Saturn is known for its prominent ring system.",
        "Mars is known for its prominent ring system.",
        "The rings are made of solid gold.",
        "Saturn has the most spectacular ring system in the Solar System, made mostly of ice particles.",
        "Uranus rotates on its side, with an axial tilt of about 98 degrees.",
    ),
    (
        "everest_height",
        "How tall is Mount Everest?",
        "Mount Everest is about 8,849 metres tall.",
        "Mount Everest is about 5,000 metres tall.",
        "It grows by ten metres every year.",
        "A 2020 survey measured the height of Mount Everest at 8,848.86 metres above sea level.",
        "Mount Kilimanjaro is the highest mountain in Africa.",
    ),
    (
        "bats",
        "Which is the only mammal capable of true flight?",
        "Bats are the only mammals capable of true flight.",
        "Flying squirrels are the only mammals capable of true flight.",
        "Bats are blind.",
        "Bats are the only mammals that can truly fly; flying squirrels only glide.",
        "Penguins are birds that cannot fly but swim well.",
    ),
    (
        "tokyo",
        "What is the capital of Japan?",
        "Tokyo is the capital of Japan.",
        "Kyoto is the capital of Japan.",
        "Tokyo became the capital in 1950.",
        "Tokyo has been the capital of Japan since 1868, when the emperor moved there from Kyoto.",
        "Mount Fuji is the highest mountain in Japan.",
    ),
    (
        "vitamin_c",
        "Which disease is caused by a lack of vitamin C?",
        "A lack of vitamin C causes scurvy.",
        "A lack of vitamin C causes rickets.",
        "Scurvy is contagious.",
        "Scurvy is a disease caused by a lack of vitamin C; it was common among sailors on long voyages.",
        "Rickets is caused by a lack of vitamin D and weakens the bones of children.",
    ),
    (
        "pi",
        "What is the value of pi to two decimal places?",
        "Pi is 3.14 to two decimal places.",
        "Pi is 3.41 to two decimal places.",
        "Pi is a rational number.",
        "Pi, the ratio of a circle's circumference to its diameter, is approximately 3.14159.",
        "The square root of two is approximately 1.414.",
    ),
    (
        "whale",
        "What is the largest animal ever known to have lived?",
        "The blue whale is the largest animal known to have lived.",
        "The African elephant is the largest animal known to have lived.",
        "Blue whales live only in freshwater lakes.",
        "The blue whale, which can reach about 30 metres in length, is the largest animal known to have "
        "ever existed.",
        "The African elephant is the largest living land animal.",
    ),
    (
        "mona_lisa",
        "Who painted the Mona Lisa?",
        "Leonardo da Vinci painted the Mona Lisa.",
        "Michelangelo painted the Mona Lisa.",
        "It is painted on canvas in watercolour.",
        "The Mona Lisa was painted by Leonardo da Vinci in the early sixteenth century and hangs in the "
        "Louvre in Paris.",
        "Michelangelo painted the ceiling of the Sistine Chapel.",
    ),
    (
        "antarctica",
        "Which continent has the South Pole?",
        "Antarctica contains the South Pole.",
        "Australia contains the South Pole.",
        "Antarctica has a large permanent population.",
        "The geographic South Pole is located on the continent of Antarctica.",
        "The Arctic is an ocean surrounded by land and covered by sea ice.",
    ),
    (
        "chess",
        "How many squares are on a chessboard?",
        "A chessboard has 64 squares.",
        "A chessboard has 100 squares.",
        "Chess was invented in the twentieth century.",
        "A chessboard is an eight-by-eight grid of 64 squares, alternately light and dark.",
        "Draughts, also called checkers, is played on the dark squares of a similar board.",
    ),
    (
        "iron",
        "Which metal is the main component of steel?",
        "Iron is the main component of steel.",
        "Aluminium is the main component of steel.",
        "Steel never rusts.",
        "Steel is an alloy made mostly of iron with a small amount of carbon.",
        "Aluminium is a light metal widely used in aircraft.",
    ),
    (
        "light_year",
        "What does a light-year measure?",
        "A light-year measures distance.",
        "A light-year measures time.",
        "A light-year is shorter than a kilometre.",
        "A light-year is a unit of distance: how far light travels in one year, about 9.46 trillion "
        "kilometres.",
        "A parsec is another astronomical unit, equal to about 3.26 light-years.",
    ),
]

CRITERIA = [
    "The answer is one or two sentences long.",
    "The answer names a specific person, place, number or date.",
    "The answer is written in plain language a child could follow.",
    "The answer states the fact directly, without hedging.",
]


def build_rows() -> list[dict[str, Any]]:
    """The 200 rows, fact by fact, each fact's five situations in order."""
    rows: list[dict[str, Any]] = []
    for number, (topic, question, reference, wrong, extra, support, off_topic) in enumerate(FACTS):
        situations: list[tuple[str, str, list[str], str | None]] = [
            ("faithful", reference, [support, off_topic], reference),
            ("hallucinated", wrong, [off_topic, support], reference),
            ("embellished", f"{reference} {extra}", [support], reference),
            ("abstains", "I don't know.", [off_topic], None if number % 5 == 0 else reference),
            ("unretrieved", reference, [], reference),
        ]
        for case, answer, contexts, ref in situations:
            rows.append(
                {
                    "id": f"{topic}-{case}",
                    "topic": topic,
                    "case": case,
                    "question": question,
                    "answer": answer,
                    "contexts": contexts,
                    "reference": ref,
                    "criteria": CRITERIA[len(rows) % len(CRITERIA)],
                }
            )
    return rows


if __name__ == "__main__":
    rows = build_rows()
    OUT.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    print(f"{len(rows)} rows -> {OUT}")
