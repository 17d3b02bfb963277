// Prints how well CyclePredictor predicts the next period on a generated population (see scripts/cycle-eval.sh).
let women = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 20_000 : 20_000
let seed = CommandLine.arguments.count > 2 ? UInt64(CommandLine.arguments[2]) ?? 2026 : 2026
print("cycle prediction on \(women) generated charts (seed \(seed)):")
print(CyclePredictionEvaluation.run(women: women, seed: seed).report)
