import Foundation

extension SVGCharts {
    /// One line per series over `labels` (weeks), values 0…1 (nil: no point that week); each
    /// point carries `data-label`, `data-series`, `data-value` and `data-count`.
    static func lines(id: String, label: String, labels: [String], series: [String], values: [String: [String: (value: Double, count: Int)]])
        -> TrustedHTML
    {
        let width = 720.0
        let height = 220.0
        let top = 12.0
        let bottom = 24.0
        let left = 34.0
        let plot = height - top - bottom
        let step = labels.count > 1 ? (width - left - 12) / Double(labels.count - 1) : 0
        func y(_ value: Double) -> Double { top + plot * (1 - min(max(value, 0), 1)) }
        var svg = """
            <svg id="\(ConsoleHTML.escape(id))" class="chart" viewBox="0 0 \(Int(width)) \(Int(height))" role="img" aria-label="\(ConsoleHTML.escape(label))">

            """
        for tick in [0.0, 0.5, 1.0] {
            svg += "<line class=\"axis\" x1=\"\(number(left))\" y1=\"\(number(y(tick)))\" x2=\"\(number(width))\" y2=\"\(number(y(tick)))\"/>"
            svg += "<text class=\"tick\" x=\"0\" y=\"\(number(y(tick) + 4))\">\(Int(tick * 100)) %</text>\n"
        }
        for (seriesIndex, name) in series.enumerated() {
            let points = labels.enumerated().compactMap { index, week in values[name]?[week].map { (index, week, $0) } }
            let path = points.map { "\(number(left + Double($0.0) * step)),\(number(y($0.2.value)))" }.joined(separator: " ")
            if points.count > 1 { svg += "<polyline class=\"line s\(seriesIndex % maxSeries)\" points=\"\(path)\"/>\n" }
            for (index, week, point) in points {
                svg += """
                    <circle class="s\(seriesIndex % maxSeries)" cx="\(number(left + Double(index) * step))" cy="\(number(y(point.value)))" r="4" \
                    data-label="\(ConsoleHTML.escape(week))" data-series="\(ConsoleHTML.escape(name))" data-value="\(number(point.value))" data-count="\(point.count)">\
                    <title>\(ConsoleHTML.escape("\(name), to \(week): \(Int((point.value * 100).rounded())) % of \(point.count)"))</title></circle>

                    """
            }
        }
        for (index, week) in labels.enumerated() where (labels.count - 1 - index) % 4 == 0 {
            // The last one ends at its point, where centred it would be cut.
            let anchor = index == labels.count - 1 ? "end" : "middle"
            svg +=
                "<text class=\"tick\" x=\"\(number(left + Double(index) * step))\" y=\"\(number(height - 6))\" text-anchor=\"\(anchor)\">\(ConsoleHTML.escape(String(week.suffix(5))))</text>\n"
        }
        svg += "</svg>\n"
        let legend = series.enumerated().map { index, name in
            "<li><span class=\"swatch s\(index % maxSeries)\"></span>\(ConsoleHTML.escape(name))</li>"
        }
        return TrustedHTML(html: svg + "<ul class=\"legend\">" + legend.joined() + "</ul>")
    }

    /// The reliability diagram: per bin of stated probability, the share that was right (a bar
    /// from the bin's mean stated probability), against the diagonal of perfect calibration.
    static func calibration(id: String, bins: [CalibrationBin]) -> TrustedHTML {
        let size = 300.0
        let margin = 30.0
        let plot = size - 2 * margin
        func x(_ value: Double) -> Double { margin + plot * value }
        func y(_ value: Double) -> Double { margin + plot * (1 - value) }
        var svg = """
            <svg id="\(ConsoleHTML.escape(id))" class="calibration" viewBox="0 0 \(Int(size)) \(Int(size))" role="img" aria-label="calibration: stated probability against the share right">
            <rect class="frame" x="\(number(margin))" y="\(number(margin))" width="\(number(plot))" height="\(number(plot))"/>
            <line class="diagonal" x1="\(number(x(0)))" y1="\(number(y(0)))" x2="\(number(x(1)))" y2="\(number(y(1)))"/>
            <text class="tick" x="\(number(margin))" y="\(number(size - 8))">0</text><text class="tick" x="\(number(size - margin))" y="\(number(size - 8))" text-anchor="end">stated 100 %</text>
            <text class="tick" x="2" y="\(number(margin + 4))">100 %</text>

            """
        for bin in bins where bin.count > 0 {
            let width = plot / Double(max(bins.count, 1)) * 0.8
            let left = x(bin.lower) + plot / Double(max(bins.count, 1)) * 0.1
            svg += """
                <rect class="s0" x="\(number(left))" y="\(number(y(bin.right)))" width="\(number(width))" height="\(number(max(y(0) - y(bin.right), 1)))" \
                data-bin="\(number(bin.lower))" data-count="\(bin.count)" data-stated="\(number(bin.stated))" data-right="\(number(bin.right))">\
                <title>\(ConsoleHTML.escape("stated \(Int((bin.lower * 100).rounded()))–\(Int((bin.upper * 100).rounded())) %: \(Int((bin.right * 100).rounded())) % right of \(bin.count)"))</title></rect>

                """
        }
        svg += "</svg>\n"
        return TrustedHTML(html: svg)
    }
}

/// One bin of the reliability diagram.
struct CalibrationBin: Sendable, Equatable {
    var lower: Double
    var upper: Double
    var count: Int
    /// The mean stated probability of the bin's claims.
    var stated: Double
    /// The share of them whose verdict the marks confirmed.
    var right: Double

    /// The bins of `points` (stated probability, whether right), `count` of them, and the
    /// expected calibration error: the count-weighted mean gap between stated and right.
    static func bins(_ points: [(stated: Double, right: Bool)], count: Int = 10) -> (bins: [CalibrationBin], ece: Double?) {
        var bins = (0..<count).map { CalibrationBin(lower: Double($0) / Double(count), upper: Double($0 + 1) / Double(count), count: 0, stated: 0, right: 0) }
        for point in points {
            let index = min(max(Int(point.stated * Double(count)), 0), count - 1)
            bins[index].count += 1
            bins[index].stated += point.stated
            bins[index].right += point.right ? 1 : 0
        }
        for index in bins.indices where bins[index].count > 0 {
            bins[index].stated /= Double(bins[index].count)
            bins[index].right /= Double(bins[index].count)
        }
        guard !points.isEmpty else { return (bins, nil) }
        let ece = bins.reduce(0.0) { $0 + Double($1.count) / Double(points.count) * abs($1.right - $1.stated) }
        return (bins, ece)
    }
}
