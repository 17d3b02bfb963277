import Foundation

/// One operation's daily p50, p95 and p99 durations drawn on the server as inline SVG: three lines over the days, each
/// point with a `<title>`, and a dashed budget line when the operation has one (seed 004: leaderboard fetches under
/// 2 s). The chart is an image labelled by its title and a summary of every point.
/// Colours on white: p50 `#1f5fa8`, p95 `#8a4b00`, p99 `#a4262c`, budget `#1d1d1f` (each at least 4.5:1).
struct PercentileChart: Sendable {
    struct Day: Sendable {
        let label: String
        let p50: Int
        let p95: Int
        let p99: Int
    }

    let title: String
    let days: [Day]
    /// The duration the operation should stay under, in milliseconds.
    let budget: Int?

    static let series: [(name: String, colour: String, value: @Sendable (Day) -> Int)] = [
        ("p50", "#1f5fa8", { $0.p50 }), ("p95", "#8a4b00", { $0.p95 }), ("p99", "#a4262c", { $0.p99 }),
    ]

    var svg: String {
        let width = 640, height = 220, top = 20, bottom = 36, left = 56, right = 16
        let peak = max(days.map(\.p99).max() ?? 0, budget.map { $0 + $0 / 10 } ?? 0, 1)
        let plotHeight = Double(height - top - bottom)
        let step = days.count > 1 ? Double(width - left - right) / Double(days.count - 1) : 0
        func x(_ index: Int) -> Double { days.count > 1 ? Double(left) + step * Double(index) : Double(left + (width - left - right) / 2) }
        func y(_ value: Int) -> Double { Double(height - bottom) - plotHeight * Double(value) / Double(peak) }
        let id = "chart-" + String(title.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" })
        var summary = days.map { "\($0.label): p50 \($0.p50) ms, p95 \($0.p95) ms, p99 \($0.p99) ms" }.joined(separator: "; ")
        if let budget { summary += ". Budget \(budget) ms" }
        var out = "<svg class=\"chart\" viewBox=\"0 0 \(width) \(height)\" role=\"img\" aria-labelledby=\"\(id)-t \(id)-d\" preserveAspectRatio=\"xMidYMid meet\">"
        out += "<title id=\"\(id)-t\">\(escape(title))</title><desc id=\"\(id)-d\">\(escape(summary)).</desc>"
        out += "<line x1=\"\(left)\" y1=\"\(height - bottom)\" x2=\"\(width - right)\" y2=\"\(height - bottom)\" stroke=\"#6e6e73\" stroke-width=\"1\"/>"
        out += "<text x=\"\(left - 6)\" y=\"\(format(y(peak)) )\" text-anchor=\"end\" font-size=\"11\" fill=\"#1d1d1f\">\(peak) ms</text>"
        out += "<text x=\"\(left - 6)\" y=\"\(height - bottom)\" text-anchor=\"end\" font-size=\"11\" fill=\"#1d1d1f\">0</text>"
        if let budget {
            out += "<g class=\"budget\"><title>Budget: \(budget) ms</title>"
            out += "<line x1=\"\(left)\" y1=\"\(format(y(budget)))\" x2=\"\(width - right)\" y2=\"\(format(y(budget)))\" stroke=\"#1d1d1f\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>"
            out += "<text x=\"\(width - right)\" y=\"\(format(y(budget) - 4))\" text-anchor=\"end\" font-size=\"11\" fill=\"#1d1d1f\">budget \(budget) ms</text></g>"
        }
        for (index, series) in Self.series.enumerated() {
            let points = days.enumerated().map { "\(format(x($0.offset))),\(format(y(series.value($0.element))))" }.joined(separator: " ")
            out += "<g><title>\(series.name)</title><polyline fill=\"none\" stroke=\"\(series.colour)\" stroke-width=\"2\" points=\"\(points)\"/>"
            for (position, day) in days.enumerated() {
                out += "<circle cx=\"\(format(x(position)))\" cy=\"\(format(y(series.value(day))))\" r=\"3\" fill=\"\(series.colour)\"><title>\(escape("\(day.label) \(series.name): \(series.value(day)) ms"))</title></circle>"
            }
            out += "<text x=\"\(left + 8 + index * 56)\" y=\"\(top - 6)\" font-size=\"11\" fill=\"\(series.colour)\">\(series.name)</text></g>"
        }
        for (index, day) in days.enumerated() where days.count <= 16 || index % 2 == 0 {
            out += "<text x=\"\(format(x(index)))\" y=\"\(height - bottom + 16)\" text-anchor=\"middle\" font-size=\"11\" fill=\"#1d1d1f\">\(escape(day.label))</text>"
        }
        return out + "</svg>"
    }

    private func format(_ value: Double) -> String {
        String(format: "%.1f", value)
    }
}
