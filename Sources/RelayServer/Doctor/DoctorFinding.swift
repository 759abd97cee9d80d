/// One check of `rhea-relay doctor`: what was checked, whether it passed, and, when it did not,
/// what is wrong and how to fix it.
public struct DoctorFinding: Sendable, Hashable {
    public var passed: Bool
    /// What was checked: `configuration`, `relay.yaml`, `environment`, `telegram`, `backend`, `store`.
    public var subject: String
    /// What is true, or what is wrong and the fix.
    public var detail: String

    public static func ok(_ subject: String, _ detail: String) -> DoctorFinding {
        DoctorFinding(passed: true, subject: subject, detail: detail)
    }

    public static func problem(_ subject: String, _ detail: String) -> DoctorFinding {
        DoctorFinding(passed: false, subject: subject, detail: detail)
    }

    /// `✓ telegram: on (long polling)`, `✗ relay.yaml: slak: …`.
    public var line: String { "\(passed ? "✓" : "✗") \(subject): \(detail)" }
}
