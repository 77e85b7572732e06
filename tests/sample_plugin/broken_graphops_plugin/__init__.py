"""A plugin whose import fails, to show that the others keep working."""
import a_module_that_does_not_exist  # noqa: F401
