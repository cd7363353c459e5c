// placeholder: filled in by the issue-4 work on this file
