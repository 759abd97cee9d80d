import Foundation
import TribunalSimulation

// Each seed's figures in a file, and another run's compared seed by seed (issue 48, point 3: "nothing
// else gets worse" within paired standard errors). Two runs on the same seeds draw the same claims and
// votes, so the difference per seed removes the claims' own noise: its standard error is what a change
// must stand out of, far smaller than the spread over seeds the tables print.

/// One panel on one seed, as a CSV row.
struct SeedRow: Hashable {
    static let header = "panel,seed,best,majority,learned,oracle,ece,floor,cold_majority,cold_learned,cold_ece,hindsight,told"
    var panel: String
    var seed: UInt64
    var values: [Double]

    static let names = header.split(separator: ",").dropFirst(2).map(String.init)

    init(panel: String, seed: UInt64, score: PanelScore) {
        self.panel = panel
        self.seed = seed
        values = [
            score.bestSingle, score.majority, score.learned, score.oracle, score.learnedECE, score.learnedFloor, score.coldMajority, score.coldLearned,
            score.coldECE, score.hindsight, score.told,
        ]
    }

    init?(line: Substring) {
        let fields = line.split(separator: ",", omittingEmptySubsequences: false)
        // A file from before the hindsight and told columns has two fields fewer: they read as not measured.
        guard fields.count == Self.names.count + 2 || fields.count == Self.names.count, let seed = UInt64(fields[1]) else { return nil }
        let parsed = fields.dropFirst(2).map { Double($0) }
        guard !parsed.contains(nil) else { return nil }
        let values = parsed.compactMap { $0 } + [Double](repeating: .nan, count: Self.names.count - parsed.count)
        (panel, self.seed, self.values) = (String(fields[0]), seed, values)
    }

    var line: String { ([panel, String(seed)] + values.map { String(format: "%.6f", $0) }).joined(separator: ",") }

    func value(_ name: String) -> Double { values[Self.names.firstIndex(of: name)!] }
}

enum PerSeed {
    static func write(_ rows: [SeedRow], to path: String) throws {
        // Not atomically: that writes a new file and renames it over `path`, which replaced /dev/null itself with a
        // plain file when it was given to throw the figures away.
        try ([SeedRow.header] + rows.map(\.line)).joined(separator: "\n").appending("\n").write(toFile: path, atomically: false, encoding: .utf8)
    }

    static func read(_ path: String) throws -> [SeedRow] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").dropFirst().compactMap { SeedRow(line: $0) }
    }

    /// Per panel: this run minus the other, mean ± paired standard error over the seeds both ran, for the council's figures.
    static func compare(_ rows: [SeedRow], against other: [SeedRow]) -> [String] {
        let before = Dictionary(other.map { ("\($0.panel)#\($0.seed)", $0) }, uniquingKeysWith: { first, _ in first })
        let measures = ["learned", "ece", "cold_learned", "cold_ece"]
        var lines = ["panel                " + measures.map { $0.padding(toLength: 16, withPad: " ", startingAt: 0) }.joined(separator: " ") + " seeds"]
        var panels: [String] = []
        for row in rows where !panels.contains(row.panel) { panels.append(row.panel) }
        for panel in panels {
            let pairs = rows.filter { $0.panel == panel }.compactMap { row in before["\(panel)#\(row.seed)"].map { (row, $0) } }
            guard pairs.count > 1 else { continue }
            let cells = measures.map { measure -> String in
                let differences = pairs.map { $0.0.value(measure) - $0.1.value(measure) }
                let mean = differences.reduce(0, +) / Double(differences.count)
                let variance = differences.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(differences.count - 1)
                let error = (variance / Double(differences.count)).squareRoot()
                return String(format: "%+.4f±%.4f", mean, error).padding(toLength: 16, withPad: " ", startingAt: 0)
            }
            lines.append(panel.padding(toLength: 21, withPad: " ", startingAt: 0) + cells.joined(separator: " ") + " \(pairs.count)")
        }
        return lines
    }
}
