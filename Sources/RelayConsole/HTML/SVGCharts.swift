import Foundation

/// Charts drawn on the server as inline SVG: no script, and each mark carries its data point
/// (`data-day`, `data-series`, `data-value`) for a reader — or a test — to check against the store.
/// Every text in them is escaped (`ConsoleHTML.escape`).
enum SVGCharts {
    /// The palette's size: series beyond it share "other".
    static let maxSeries = 8

    /// One bar per day, stacked by series (commands, models). `format` writes a value for titles
    /// and the axis.
    static func stackedBars(
        id: String, label: String, days: [String], series: [String], values: [String: [String: Double]], format: (Double) -> String
    ) -> TrustedHTML {
        let width = 720.0
        let height = 220.0
        let top = 16.0
        let bottom = 24.0
        let left = 8.0
        let plot = height - top - bottom
        let slot = (width - left) / Double(max(days.count, 1))
        let barWidth = max(1, slot * 0.7)
        let totals = days.map { day in series.reduce(0) { $0 + (values[day]?[$1] ?? 0) } }
        let peak = totals.max() ?? 0
        let scale = peak > 0 ? plot / peak : 0
        var svg = """
            <svg id="\(ConsoleHTML.escape(id))" class="chart" viewBox="0 0 \(Int(width)) \(Int(height))" role="img" aria-label="\(ConsoleHTML.escape(label))" data-peak="\(number(peak))">
            <line class="axis" x1="\(left)" y1="\(top + plot)" x2="\(width)" y2="\(top + plot)"/>
            <text class="tick" x="\(left)" y="\(top - 4)">\(ConsoleHTML.escape(peak > 0 ? "max " + format(peak) : "nothing yet"))</text>

            """
        for (index, day) in days.enumerated() {
            let x = left + Double(index) * slot + (slot - barWidth) / 2
            var y = top + plot
            for (seriesIndex, name) in series.enumerated() {
                guard let value = values[day]?[name], value > 0 else { continue }
                let barHeight = max(value * scale, 1)
                y -= barHeight
                let title = "\(day) · \(name): \(format(value))"
                svg += """
                    <rect class="s\(seriesIndex % maxSeries)" x="\(number(x))" y="\(number(y))" width="\(number(barWidth))" height="\(number(barHeight))" \
                    data-day="\(ConsoleHTML.escape(day))" data-series="\(ConsoleHTML.escape(name))" data-value="\(number(value))"><title>\(ConsoleHTML.escape(title))</title></rect>

                    """
            }
            // A date under every seventh bar, from the last (today) back.
            if (days.count - 1 - index) % 7 == 0 {
                // Centred under its bar; the last one ends at the edge, where it would be cut.
                let isLast = index == days.count - 1
                let anchor = isLast ? "end" : "middle"
                let at = isLast ? width : x + barWidth / 2
                svg +=
                    "<text class=\"tick\" x=\"\(number(at))\" y=\"\(number(height - 6))\" text-anchor=\"\(anchor)\">\(ConsoleHTML.escape(String(day.suffix(5))))</text>\n"
            }
        }
        svg += "</svg>\n"
        let legend = series.enumerated().map { index, name in
            "<li><span class=\"swatch s\(index % maxSeries)\"></span>\(ConsoleHTML.escape(name))</li>"
        }
        return TrustedHTML(html: svg + "<ul class=\"legend\">" + legend.joined() + "</ul>")
    }

    /// How much of a budget is spent and held, as a bar; without a budget, nil.
    static func gauge(spent: Double, held: Double, limit: Double) -> TrustedHTML {
        let width = 400.0
        let fraction = { (value: Double) in min(max(value / limit, 0), 1) * width }
        let spentWidth = fraction(spent)
        let heldWidth = min(fraction(spent + held) - spentWidth, width - spentWidth)
        let level = spent >= limit ? "over" : spent >= limit * 0.8 ? "near" : "under"
        return TrustedHTML(
            html: """
                <svg id="budget-gauge" class="gauge \(level)" viewBox="0 0 \(Int(width)) 24" role="img" aria-label="budget: \(Int((spent / limit * 100).rounded())) % spent" \
                data-spent="\(number(spent))" data-held="\(number(held))" data-limit="\(number(limit))">
                <rect class="track" x="0" y="0" width="\(Int(width))" height="24" rx="4"/>
                <rect class="spent" x="0" y="0" width="\(number(spentWidth))" height="24" rx="4"/>
                <rect class="held" x="\(number(spentWidth))" y="0" width="\(number(max(heldWidth, 0)))" height="24"/>
                <line class="mark" x1="\(number(width * 0.8))" y1="0" x2="\(number(width * 0.8))" y2="24"/>
                </svg>

                """)
    }

    /// A number as SVG and the data attributes write it: no exponent, at most 6 decimals.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        var text = String(format: "%.6f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }
}
