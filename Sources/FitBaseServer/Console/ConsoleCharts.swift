import Foundation

/// A bar chart drawn on the server as inline SVG: one bar per day (or category), each with its value as text and a
/// `<title>` for screen readers and pointers; the chart as a whole is an image labelled with its title and a summary.
/// Colours: bars `#1f5fa8` and text `#1d1d1f` on white (contrast 6.6:1 and 16:1).
struct BarChart: Sendable {
    let title: String
    let bars: [(label: String, value: Int)]

    var svg: String {
        let width = 640, height = 200, top = 20, bottom = 36, left = 8
        let count = max(bars.count, 1)
        let slot = Double(width - left * 2) / Double(count)
        let peak = max(bars.map(\.value).max() ?? 0, 1)
        let total = bars.reduce(0) { $0 + $1.value }
        var out = "<svg class=\"chart\" viewBox=\"0 0 \(width) \(height)\" role=\"img\" aria-labelledby=\"\(id)-t \(id)-d\" preserveAspectRatio=\"xMidYMid meet\">"
        out += "<title id=\"\(id)-t\">\(escape(title))</title>"
        out += "<desc id=\"\(id)-d\">\(escape(bars.map { "\($0.label): \($0.value)" }.joined(separator: ", "))). Total \(total).</desc>"
        out += "<line x1=\"\(left)\" y1=\"\(height - bottom)\" x2=\"\(width - left)\" y2=\"\(height - bottom)\" stroke=\"#6e6e73\" stroke-width=\"1\"/>"
        for (index, bar) in bars.enumerated() {
            let barHeight = Double(height - top - bottom) * Double(bar.value) / Double(peak)
            let x = Double(left) + slot * Double(index) + slot * 0.15
            let y = Double(height - bottom) - barHeight
            let centre = Double(left) + slot * (Double(index) + 0.5)
            out += "<g><title>\(escape("\(bar.label): \(bar.value)"))</title>"
            out += "<rect x=\"\(format(x))\" y=\"\(format(y))\" width=\"\(format(slot * 0.7))\" height=\"\(format(barHeight))\" fill=\"#1f5fa8\"/>"
            out += "<text x=\"\(format(centre))\" y=\"\(format(y - 4))\" text-anchor=\"middle\" font-size=\"11\" fill=\"#1d1d1f\">\(bar.value)</text>"
            if bars.count <= 16 || index % 2 == 0 {
                out += "<text x=\"\(format(centre))\" y=\"\(height - bottom + 16)\" text-anchor=\"middle\" font-size=\"11\" fill=\"#1d1d1f\">\(escape(bar.label))</text>"
            }
            out += "</g>"
        }
        return out + "</svg>"
    }

    private var id: String {
        "chart-" + String(title.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" })
    }

    private func format(_ value: Double) -> String {
        String(format: "%.1f", value)
    }
}

/// Text made safe inside HTML and SVG markup.
func escape(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.count)
    for character in text {
        switch character {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default: out.append(character)
        }
    }
    return out
}
