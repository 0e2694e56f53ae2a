"""`flask --app app run` or `python app.py`: the app on the configured database."""

from sota_casino.config import LOCAL_HOSTS
from sota_casino.config import SettingsError
from sota_casino.factory import app_from_environment
from sota_casino.factory import make_instance_keys

app = app_from_environment()

if __name__ == "__main__":
    try:  # made before serving, so a key file that cannot be made stops the start in one line
        make_instance_keys(app)
    except SettingsError as error:
        raise SystemExit(f"Error: {error}") from None
    # Served on this computer only, so answering for its own names only, unless told others.
    app.config["TRUSTED_HOSTS"] = app.config["TRUSTED_HOSTS"] or list(LOCAL_HOSTS)
    app.run(host="127.0.0.1", port=app.config["PORT"])
