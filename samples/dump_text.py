"""Text pieces for generate_dump: prompts, a token corpus for responses, a tiny tokenizer."""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

SYSTEM_MARK = "<endofsystem>"
SYSTEM_PROMPTS = (
    "You are a helpful assistant.",
    "You are a careful math tutor. Reason step by step and put the final answer last.",
    "You are a concise assistant. Answer briefly.",
)
MATH = (  # (question template, answer from a, b, c) with c = a + b
    ("Tom has {a} apples and buys {b} more. How many apples does he have now?",
     lambda a, b, c: a + b),
    ("A train travels {a} km per hour for {b} hours. How far does it travel in km?",
     lambda a, b, c: a * b),
    ("What is {a} multiplied by {b}?", lambda a, b, c: a * b),
    ("Sara had {c} stickers and gave {a} to her friend. How many stickers are left?",
     lambda a, b, c: b),
    ("A box holds {a} pencils. How many pencils are in {b} boxes?", lambda a, b, c: a * b),
    ("Compute {a} + {b} * {c}.", lambda a, b, c: a + b * c),
    ("If x + {a} = {c}, what is x?", lambda a, b, c: b),
    ("A class has {a} girls and {b} boys. How many students are in the class?",
     lambda a, b, c: c),
)
GENERAL = (
    ("What is the capital of France?", "Paris"),
    ("What is the chemical symbol for gold?", "Au"),
    ("How many continents are there on Earth?", "7"),
    ("Which is the largest planet in the solar system?", "Jupiter"),
    ("Who wrote the play Hamlet?", "William Shakespeare"),
    ("At what temperature in Celsius does water boil at sea level?", "100"),
    ("What is the square root of 144?", "12"),
    ("How many sides does a hexagon have?", "6"),
    ("What is the main language spoken in Brazil?", "Portuguese"),
    ("Which gas do plants release during photosynthesis?", "Oxygen"),
    ("What is the smallest prime number?", "2"),
    ("In which year did the first person walk on the Moon?", "1969"),
)
SENTENCES = (
    "Let me think about this step by step.", "First, we need to understand the question.",
    "The problem gives us two numbers.", "We need to find the total.",
    "Let's write down what we know:", "So we add the two values together.",
    "Wait, let me double-check the calculation.", "That gives us the intermediate result.",
    "Hmm, maybe there is a simpler way.", "Multiplying gives the answer directly.",
    "Now subtract the smaller number from the larger one.", "Therefore, the result follows.",
    "Let me verify: the units are consistent.", "This matches the information given.",
    "Alternatively, we can set up an equation: x + a = c.", "Solving for x, we get x = c - a.",
    "The question asks for a single value.", "I recall that this is a well-known fact.",
    "Step 1: identify the quantities.", "Step 2: combine them, 3 + 4 = 7, for example.",
    "Actually, wait.", "That seems right.", "Let me reconsider the second part.",
    "So far, so good.", "The key idea is to count carefully, one by one.",
)
CHINESE = (("我们", "来", "计算", "一下", "。"), ("所以", "答案是", "这个", "结果", "。"),
           ("首先", "，", "我们", "需要", "计算", "总数", "。"),
           ("嗯", "，", "再", "检查", "一下", "。"))
ANSWERS = ("The answer is {}.", "So the final answer is \\boxed{{{}}}.", "答案是 {}")
HTML_PROMPT = "Show me some bold text in HTML."
HTML_RESPONSE = ("<think>\nThe user wants HTML markup.\n</think>\n"
                 "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\"> "
                 "<script>alert(1)</script> <b>bold</b>")
ZH_PROMPT = "计算 12 乘以 7 等于多少？"
ZH_RESPONSE = ("<think>\n12 乘以 7 ，先算 10 乘以 7 等于 70 ，再算 2 乘以 7 等于 14 ，"
               "70 加 14 等于 84 。\n</think>\n答案是 84")
TOKEN_RE = re.compile(r"</?think>|\n|[^\S\n]*(?:\w+|[^\w\s])|[^\S\n]+")


def tokenize(text: str) -> list[str]:
    """Word-ish pieces with leading spaces, newlines apart; they join back to the text."""
    return TOKEN_RE.findall(text)


def make_pool(rng: np.random.Generator, size: int) -> list[tuple[str, str]]:
    """`size` (prompt, ground_truth) pairs: math word problems and general questions."""
    pool = []
    for _ in range(size):
        if rng.random() < 0.7:
            template, answer = MATH[rng.integers(len(MATH))]
            a, b = (int(v) for v in rng.integers(2, 60, 2))
            question, truth = template.format(a=a, b=b, c=a + b), str(answer(a, b, a + b))
        else:
            question, truth = GENERAL[rng.integers(len(GENERAL))]
        if rng.random() < 0.4:
            question = SYSTEM_PROMPTS[rng.integers(len(SYSTEM_PROMPTS))] + SYSTEM_MARK + question
        pool.append((question, truth))
    return pool


def wrong_answer(rng: np.random.Generator, truth: str) -> str:
    """A plausible but wrong answer to a question whose answer is `truth`."""
    if truth.isdigit():
        return str(int(truth) + int(rng.choice([-10, -2, -1, 1, 2, 3, 10])))
    others = [a for _, a in GENERAL if a != truth]
    return others[rng.integers(len(others))]


def answer_tokens(rng: np.random.Generator, answer: str) -> list[str]:
    """The closing piece of a response: end of thinking, then the answer."""
    template = ANSWERS[rng.choice(len(ANSWERS), p=(0.55, 0.37, 0.08))]
    return tokenize("\n</think>\n" + template.format(answer))


@dataclass
class Corpus:
    """A long run of reasoning tokens; responses are slices of it starting at a sentence."""
    tokens: np.ndarray  # object array of str
    offsets: np.ndarray  # char offset of each token in text, plus the end
    text: str
    starts: np.ndarray  # token index of each sentence start

    def piece(self, rng: np.random.Generator, n: int) -> tuple[list[str], str]:
        """n consecutive tokens from a random sentence start, and their text."""
        last = int(np.searchsorted(self.starts, len(self.tokens) - n, side="right"))
        i = int(self.starts[rng.integers(last)])
        return self.tokens[i:i + n].tolist(), self.text[self.offsets[i]:self.offsets[i + n]]

    def response(self, rng: np.random.Generator, length: int,
                 answer: str | None) -> tuple[list[str], str]:
        """Tokens and text: <think>, reasoning, and (unless truncated) </think> and the answer."""
        tail = [] if answer is None else answer_tokens(rng, answer)
        body, text = self.piece(rng, max(length - 2 - len(tail), 1))
        if body[0].startswith(" "):  # no space right after the newline
            body[0], text = body[0][1:], text[1:]
        return ["<think>", "\n", *body, *tail], "<think>\n" + text + "".join(tail)


def build_corpus(rng: np.random.Generator, sentences: int = 30_000) -> Corpus:
    """Random English sentences, newlines between some, now and then a Chinese run."""
    english = [tokenize(s) for s in SENTENCES]
    tokens: list[str] = []
    starts = []
    for k in range(sentences):
        starts.append(len(tokens))
        chinese = rng.random() < 0.002
        words = list(CHINESE[k % len(CHINESE)] if chinese else english[rng.integers(len(english))])
        if rng.random() < 0.25:
            tokens.append("\n")
        elif not chinese:
            words[0] = " " + words[0]
        tokens.extend(words)
    offsets = np.concatenate([[0], np.cumsum([len(t) for t in tokens])])
    return Corpus(np.array(tokens, dtype=object), offsets, "".join(tokens), np.array(starts))
