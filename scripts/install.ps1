# Installs VibeLearn from a release archive on Windows (SPEC §10, channel 2): downloads
# vibelearn-<version>-x86_64-pc-windows-msvc.zip and its .sha256, checks the checksum, unpacks it
# in a temporary folder and runs `vl.exe install <args>` (default: claude-code), which copies
# vl.exe and the vl-worker.exe beside it to %USERPROFILE%\.vibelearn\bin and registers the hooks.
#
#   irm <release>/install.ps1 | iex
#
# $env:VIBELEARN_RELEASE_URL: where the archives are (default: the latest GitHub release of
# $env:VIBELEARN_REPO, vibelearn/vibelearn). $env:VIBELEARN_VERSION: the version (default: the
# release's version.txt). Not run here (no PowerShell on this machine): see docs/PLATFORMS.md.
$ErrorActionPreference = 'Stop'
$repo = if ($env:VIBELEARN_REPO) { $env:VIBELEARN_REPO } else { 'vibelearn/vibelearn' }
$base = if ($env:VIBELEARN_RELEASE_URL) { $env:VIBELEARN_RELEASE_URL } else { "https://github.com/$repo/releases/latest/download" }
$target = 'x86_64-pc-windows-msvc'
$work = Join-Path ([System.IO.Path]::GetTempPath()) ("vibelearn-" + [System.Guid]::NewGuid())
New-Item -ItemType Directory -Path $work | Out-Null
try {
    $version = $env:VIBELEARN_VERSION
    if (-not $version) { $version = (Invoke-RestMethod "$base/version.txt").Trim() }
    $name = "vibelearn-$version-$target"
    $zip = Join-Path $work "$name.zip"
    Invoke-WebRequest "$base/$name.zip" -OutFile $zip -UseBasicParsing
    $expected = ((Invoke-RestMethod "$base/$name.zip.sha256") -split '\s+')[0].ToLower()
    $actual = (Get-FileHash $zip -Algorithm SHA256).Hash.ToLower()
    if ($expected -ne $actual) { throw "$name.zip does not match its checksum ($actual, expected $expected); nothing installed" }
    Expand-Archive $zip -DestinationPath $work
    $arguments = if ($args.Count -gt 0) { $args } else { @('claude-code') }
    & (Join-Path $work "$name\vl.exe") install @arguments
    if ($LASTEXITCODE -ne 0) { throw "vl install failed ($LASTEXITCODE)" }
} finally {
    Remove-Item -Recurse -Force $work
}
