// The tool of the FitBaseAPIGenerator plugin: runs swift-openapi-generator, then writes its files with plain imports.
//
// With `accessModifier: public` the generator writes each import of each file as `public import`. A file that declares
// nothing from one of those modules (Types+Components+Headers.swift uses neither Foundation's `URL` nor FitBaseCore)
// then draws "public import of 'X' was not used in public declarations or inlinable code", once per import and file.
// The generator wraps each import in `#if compiler(>=6.4) @diagnose(UnusedImportAccess, as: ignored) #endif`, which
// older compilers skip, and before 6.4 no diagnostic group or package setting names this warning. A plain `import` is
// public in the Swift 6 language mode without `InternalImportsByDefault` (FitBaseAPI does not enable it): the same
// API, and nothing to warn about. Once every compiler that builds FitBase is 6.4 or later, go back to the generator's
// own `OpenAPIGenerator` plugin.
//
//     fitbase-api-generator GENERATOR DOCUMENT CONFIGURATION SCRATCH OUTPUT...
//
// GENERATOR writes its files into the directory SCRATCH; each OUTPUT is the path the file of its name is written to.
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("error: fitbase-api-generator: \(message)\n".utf8))
    exit(1)
}

/// `source` with the access level taken off each import of its header (the lines before its first declaration), and
/// the generator's `#if compiler(>=6.4)` `@diagnose(UnusedImportAccess, as: ignored)` `#endif` around them dropped.
func plainImports(_ source: String) -> String {
    let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
    let diagnose: [Substring] = ["#if compiler(>=6.4)", "@diagnose(UnusedImportAccess, as: ignored)", "#endif"]
    var kept: [Substring] = []
    var index = 0
    while index < lines.count {
        let line = lines[index]
        if lines[index...].starts(with: diagnose) {
            index += diagnose.count
            continue
        }
        if let access = line.wholeMatch(of: /((?:@\S+ )*)(?:public|package) (import .+)/) {
            kept.append(access.1 + access.2)
        } else if line.isEmpty || line.hasPrefix("//") || line.wholeMatch(of: /(?:@\S+ )*import .+/) != nil {
            kept.append(line)
        } else {
            break
        }
        index += 1
    }
    return (kept + lines[index...]).joined(separator: "\n")
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count > 4 else { fail("usage: GENERATOR DOCUMENT CONFIGURATION SCRATCH OUTPUT...") }
let (generator, document, configuration, scratch) = (arguments[0], arguments[1], arguments[2], arguments[3])
let outputs = arguments.dropFirst(4).map { URL(fileURLWithPath: $0) }

try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
let run = Process()
run.executableURL = URL(fileURLWithPath: generator)
run.arguments = [
    "generate", document, "--config", configuration, "--output-directory", scratch, "--plugin-source", "build",
]
try run.run()
run.waitUntilExit()
guard run.terminationStatus == 0 else { fail("swift-openapi-generator exited \(run.terminationStatus)") }

let written = Set(try FileManager.default.contentsOfDirectory(atPath: scratch).filter { $0.hasSuffix(".swift") })
let declared = Set(outputs.map(\.lastPathComponent))
if let file = written.subtracting(declared).sorted().first {
    fail("swift-openapi-generator wrote \(file), which FitBaseAPIGenerator.generatedFiles does not declare")
}
if let file = declared.subtracting(written).sorted().first { fail("swift-openapi-generator did not write \(file)") }
for output in outputs {
    let generated = URL(fileURLWithPath: scratch).appending(component: output.lastPathComponent)
    let plain = plainImports(try String(contentsOf: generated, encoding: .utf8))
    // Written only when changed, as the generator writes its own: an unchanged file is not compiled again.
    if (try? String(contentsOf: output, encoding: .utf8)) != plain {
        let directory = output.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try plain.write(to: output, atomically: true, encoding: .utf8)
    }
}
